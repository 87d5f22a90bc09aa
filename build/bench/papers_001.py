# build/bench/papers_001.py: seed 001's rows of `make bench-papers` (papers.py): VEMS' file read
# and write times by file size (Figs 4, 5) and the effect of read-ahead and the user buffer on
# reads (Fig. 6), from vems.py's boots: Formica's NVM tier against its plain disk path, and
# Linux's dm-writecache against ext4 alone, in the same QEMU.
from types import SimpleNamespace

import vems
from papers_page import rounded, row

# Seed 001's numbers (§5.2, §5.3): VEMS over VEMS-block (its block-interface variant) for files
# of 8-128 MB and at 512 MB; read-ahead on over off at 512 MB with 8 KB and 128 KB buffers.
PAPER_001 = {
    "read_gain": "1.96-2.15", "read_gain_512": 1.16,
    "write_gain": "1.14-1.59", "write_gain_512": 1.23,
    "readahead_8k": 7.0, "readahead_128k": 1.31,
}
VEMS_SIZES = {"full": "full", "quick": "quick", "smoke": "smoke"}


def measure(options):
    """vems.py's measurements at the papers' size (the disk as it is, and at 200 IOPS)."""
    settings = vems.sized(SimpleNamespace(runs=options.runs or 3, timeout=options.timeout),
                          VEMS_SIZES[options.size])
    return {"lines": vems.measure_all(settings), "tier_mb": settings.tier_mb[0]}


def speed(lines, system, pattern, buffer_bytes, file_mb, readahead=True, disk_iops=0, tier_mb=None):
    for line in lines:
        if (line["kind"] == "vems" and line["system"] == system and line["pattern"] == pattern
                and line["buffer_bytes"] == buffer_bytes and line["file_mb"] == file_mb
                and line["readahead"] == readahead and line["disk_iops"] == disk_iops
                and (tier_mb is None or line["tier_mb"] in (0, tier_mb))):
            return line["mb_per_s"]
    return None


def over(top, bottom):
    return rounded(top / bottom) if top and bottom else None


def size_rows(lines, tier_mb, figure, pattern, buffer_bytes, paper_key):
    """Figs 4, 5: the tier's speed over the plain disk path per file size (Linux: dm-writecache
    over ext4 alone), and the MiB/s themselves."""
    rows = []
    for file_mb in sorted({line["file_mb"] for line in lines if line["kind"] == "vems"}):
        for disk_iops in sorted({line["disk_iops"] for line in lines if line["kind"] == "vems"}):
            get = dict(buffer_bytes=buffer_bytes, file_mb=file_mb, disk_iops=disk_iops, tier_mb=tier_mb)
            tier, plain = speed(lines, "formica", pattern, **get), speed(lines, "formica-no-tier", pattern, **get)
            cache, ext4 = speed(lines, "linux-dm-writecache", pattern, **get), speed(lines, "linux-ext4", pattern, **get)
            disk = f"disk at {disk_iops} IOPS" if disk_iops else "disk unthrottled"
            paper = PAPER_001[f"{paper_key}_512"] if file_mb >= 512 else PAPER_001[paper_key]
            rows.append(row("001", figure, f"{pattern}, {file_mb} MiB file, {disk}: NVM tier over the plain "
                            f"disk path (paper: VEMS over VEMS-block); Linux: dm-writecache over ext4", paper,
                            over(tier, plain), over(cache, ext4), "x", file_mb=file_mb, disk_iops=disk_iops))
            rows.append(row("001", figure, f"{pattern}, {file_mb} MiB file, {disk}: through the NVM tier "
                            f"(Linux: ext4 on dm-writecache)", None, tier, cache, "MiB/s", file_mb=file_mb,
                            disk_iops=disk_iops))
    return rows


def readahead_rows(lines, tier_mb):
    """Fig. 6: sequential reads with read-ahead over without, with 8 KiB and 128 KiB calls."""
    rows = []
    for file_mb in sorted({line["file_mb"] for line in lines if line["kind"] == "vems" and not line["readahead"]}):
        for buffer_bytes, key in ((8192, "readahead_8k"), (131072, "readahead_128k")):
            get = dict(buffer_bytes=buffer_bytes, file_mb=file_mb, tier_mb=tier_mb)
            formica = over(speed(lines, "formica", "seq-read", **get),
                           speed(lines, "formica", "seq-read", readahead=False, **get))
            linux = over(speed(lines, "linux-dm-writecache", "seq-read", **get),
                         speed(lines, "linux-dm-writecache", "seq-read", readahead=False, **get))
            rows.append(row("001", "Fig. 6", f"seq-read, {file_mb} MiB file, {buffer_bytes // 1024} KiB calls: "
                            "read-ahead on over off, through the tier (Linux: dm-writecache)",
                            PAPER_001[key] if file_mb >= 512 else None, formica, linux, "x", file_mb=file_mb,
                            buffer_bytes=buffer_bytes))
    return rows


def fsync_rows(lines, tier_mb):
    """The issue's goal beside the paper's figures: random fsynced 4 KiB writes."""
    rows = []
    for file_mb in sorted({line["file_mb"] for line in lines if line["kind"] == "vems"}):
        for disk_iops in sorted({line["disk_iops"] for line in lines if line["kind"] == "vems"}):
            get = dict(buffer_bytes=4096, file_mb=file_mb, disk_iops=disk_iops, tier_mb=tier_mb)
            tier = speed(lines, "formica", "rand-write-fsync", **get)
            rows.append(row("001", "fsync", f"random 4 KiB writes each fsynced, {file_mb} MiB file, disk "
                            f"{'at ' + str(disk_iops) + ' IOPS' if disk_iops else 'unthrottled'}: the tier over "
                            "the plain disk path (Linux: dm-writecache over ext4)", None,
                            over(tier, speed(lines, "formica-no-tier", "rand-write-fsync", **get)),
                            over(speed(lines, "linux-dm-writecache", "rand-write-fsync", **get),
                                 speed(lines, "linux-ext4", "rand-write-fsync", **get)), "x",
                            file_mb=file_mb, disk_iops=disk_iops,
                            tier_over_dm_writecache=over(tier, speed(lines, "linux-dm-writecache",
                                                                     "rand-write-fsync", **get))))
    return rows


def rows(options, measured):
    lines, tier_mb = measured["lines"], measured["tier_mb"]
    return (size_rows(lines, tier_mb, "Fig. 4", "seq-read", 8192, "read_gain")
            + size_rows(lines, tier_mb, "Fig. 5", "seq-write", 131072, "write_gain")
            + readahead_rows(lines, tier_mb) + fsync_rows(lines, tier_mb))
