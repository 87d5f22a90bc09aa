#!/usr/bin/env python3
# build/bench/vems.py: `make bench-vems`, seed 001's Figs 4-6 on Formica's NVM tier beside Linux's
# dm-writecache in the same QEMU (docs/storage.md, "The NVM tier"). apps/fileio runs the same
# patterns on four systems: Formica with the tier (--nvm-tier) and without it, Linux's ext4 on
# dm-writecache in pmem mode over the same-sized NVDIMM, and ext4 alone; on the disk as it is and
# throttled to a hard disk's rate (--disk-iops); several file sizes, tier sizes, read-ahead on and
# off. Formica writes in one boot and reads in the next (BLK's DRAM cache starts cold, the tier
# keeps its lines: that is its point); Linux drops its page cache before each pattern. Prints
# @json {"kind":"vems",...} lines (DESIGN.md's contract), medians of --runs, and writes
# build/out/bench/vems.{json,md,png}.
import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "build"))
sys.path.insert(0, str(REPO / "build" / "bench"))
from runner import client, options as runner_options  # noqa: E402
import disk_image  # noqa: E402
import linux_guest  # noqa: E402
from bench_output import OUT, add_smoke_option  # noqa: E402

SMP, MEMORY = 2, "256M"
SYSTEMS = ("formica", "formica-no-tier", "linux-dm-writecache", "linux-ext4")
HARD_DISK_IOPS = 200  # a 7,200 rpm disk's random operations a second
SEQUENTIAL_BUFFER = "128K"  # the paper's enlarged user buffer; its default BUFSIZ is 8 KiB
RANDOM_BYTES = 4096


def arguments():
    parser = argparse.ArgumentParser(description="seed 001's NVM tier against dm-writecache")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="files of 8 and 32 MiB, one run")
    parser.add_argument("--timeout", type=int, default=1800)
    add_smoke_option(parser)
    options = parser.parse_args()
    size = "smoke" if options.smoke else "quick" if options.quick else "full"
    return sized(options, size)


# The measurements of each size: file sizes, tier sizes, random operations, runs, disk rates.
SIZES = {
    "full": dict(file_mb=[8, 32, 128, 512], tier_mb=[64, 256], operations=1000, runs=None,
                 disk_iops=[0, HARD_DISK_IOPS]),
    "quick": dict(file_mb=[8, 32], tier_mb=[64], operations=300, runs=1, disk_iops=[0, HARD_DISK_IOPS]),
    "smoke": dict(file_mb=[8], tier_mb=[64], operations=20, runs=1, disk_iops=[HARD_DISK_IOPS]),
}


def sized(options, size):
    """`options` with the measurements of `size` (runs: the size's, or --runs for the full one)."""
    for name, value in SIZES[size].items():
        if name != "runs" or value is not None:
            setattr(options, name, value)
    return options


def fileio_arguments(path, file_mb, pattern, operations, buffer="8K"):
    arguments = ["-f", path, "-s", f"{file_mb}M", "-p", pattern]
    if pattern.startswith("rand-"):
        return arguments + ["-n", str(operations)]
    return arguments + ["-b", buffer]


def phases(file_mb, operations, readahead):
    """The fileio runs of one measurement, in order: (label, pattern, buffer). The write comes
    first; read-ahead off measures the sequential reads only."""
    reads = [("seq-read", "seq-read", "8K"), ("seq-read-128k", "seq-read", SEQUENTIAL_BUFFER)]
    if not readahead:
        return [("seq-write", "seq-write", SEQUENTIAL_BUFFER)] + reads
    return ([("seq-write", "seq-write", SEQUENTIAL_BUFFER)] + reads
            + [("rand-read", "rand-read", None), ("rand-write-fsync", "rand-write-fsync", None)])


def disk_size_mb(file_mb):
    return max(128, file_mb * 2)


def formica_boot(flags, commands, options):
    done = client.run(flags + ["--cmd", "; ".join(commands)], options.timeout)
    if done.rc != 0:
        raise RuntimeError(f"vems: Formica boot failed:\n{done.describe()[-3000:]}")
    return done.jsons


def formica_measure(system, file_mb, tier_mb, iops, readahead, options, scratch):
    """Two boots on a fresh image: the write, then the reads and random writes. Returns
    {label: fileio result} and the tier's report after a final `tier flush`."""
    image = disk_image.make(scratch / "formica.img", "ext3", 4096, f"{disk_size_mb(file_mb)}M")
    flags = ["--smp", str(SMP), "--mem", MEMORY, "--accel", "tcg", "--disk", str(image),
             "--timeout", str(options.timeout)]
    if iops:
        flags += ["--disk-iops", str(iops)]
    if system == "formica":
        tier = scratch / "tier.nvm"
        tier.unlink(missing_ok=True)
        flags += ["--nvm-tier", f"{tier}:{tier_mb}M"]
    if not readahead:
        flags += ["--append", "blk_read_ahead=0"]
    runs = phases(file_mb, options.operations, readahead)
    command = "run fileio "
    write = [command + " ".join(fileio_arguments("/vems.dat", file_mb, p, options.operations, b))
             for _, p, b in runs[:1]]
    rest = [command + " ".join(fileio_arguments("/vems.dat", file_mb, p, options.operations, b))
            for _, p, b in runs[1:]]
    tier_cmd = ["tier"] if system == "formica" else []
    results = formica_boot(flags, write + tier_cmd, options)
    results += formica_boot(flags, rest + ["tier flush"] + tier_cmd if tier_cmd else rest, options)
    return label_results(runs, results), [tier_over_boots([r for r in results if r.get("kind") == "tier"])]


def tier_over_boots(reports):
    """The tier's counters over both boots (each boot's BLK counts from zero)."""
    if not reports:
        return None
    total = {name: sum(r.get(name) or 0 for r in reports)
             for name in ("writeback_runs", "writeback_bytes", "bypasses", "hits", "misses")}
    total["average_run_bytes"] = total["writeback_bytes"] // total["writeback_runs"] if total["writeback_runs"] else 0
    return total


def linux_measure(system, file_mb, tier_mb, iops, readahead, options, scratch):
    """One boot: ext4 (on dm-writecache over the NVDIMM for linux-dm-writecache), the page
    cache dropped before each pattern."""
    image = scratch / "linux.img"
    image.unlink(missing_ok=True)
    disk_image.run(["mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", str(image),
                    f"{disk_size_mb(file_mb)}M"])
    flags = ["--smp", str(SMP), "--mem", MEMORY, "--accel", "tcg", "--disk", "none"]
    if iops:
        flags += ["--disk-iops", str(iops)]
    setup = "ext4"
    if system == "linux-dm-writecache":
        nvm = scratch / "linux.nvm"
        nvm.unlink(missing_ok=True)
        flags += ["--nvm", f"{nvm}:{tier_mb}M"]
        setup = "dm-writecache"
    settings = runner_options.parse(flags, str(REPO))
    runs = phases(file_mb, options.operations, readahead)
    encoded = ",".join(":".join(fileio_arguments("/mnt/vems.dat", file_mb, p, options.operations, b))
                       for _, p, b in runs)
    append = f"vems={setup} fileio={encoded} readahead={'on' if readahead else 'off'}"
    command = linux_guest.qemu_command(SMP, None, MEMORY, "tcg", False, "", image, append,
                                       settings=settings)
    return label_results(runs, linux_guest.boot(command, options.timeout)), []


def label_results(runs, results):
    fileio = [r for r in results if r.get("kind") == "fileio"]
    if len(fileio) != len(runs):
        raise RuntimeError(f"vems: {len(fileio)} fileio results for {len(runs)} runs: {results}")
    return {label: result for (label, _, _), result in zip(runs, fileio)}


def mb_per_s(result):
    seconds = result["cycles"] / result["tsc_hz"]
    return result["bytes"] / (1 << 20) / seconds if seconds > 0 else None


def configurations(options):
    """(system, file_mb, tier_mb, disk_iops, readahead) in the order they run."""
    for iops in options.disk_iops:
        for file_mb in options.file_mb:
            for tier_mb in options.tier_mb:
                for system in SYSTEMS:
                    if system in ("formica-no-tier", "linux-ext4") and tier_mb != options.tier_mb[0]:
                        continue  # no tier: one measurement per file
                    yield system, file_mb, tier_mb, iops, True
    for file_mb in options.file_mb:  # read-ahead off, on the disk as it is
        for system in SYSTEMS:
            yield system, file_mb, options.tier_mb[0], 0, False


ATTEMPTS = 3  # QEMU 10's TCG sometimes aborts (iotlb_to_section's assertion) in a Linux boot
FAILED_BOOTS = []


def measure_retried(configuration, options, scratch):
    """One measurement, on fresh images, again after a boot that failed (said, and kept in
    FAILED_BOOTS for the report); the third failure ends the benchmark."""
    system, file_mb, tier_mb, iops, readahead = configuration
    measure_one = formica_measure if system.startswith("formica") else linux_measure
    for attempt in range(1, ATTEMPTS + 1):
        try:
            return measure_one(system, file_mb, tier_mb, iops, readahead, options, scratch)
        except RuntimeError as error:
            last_line = str(error).strip().splitlines()[-1][:300]
            FAILED_BOOTS.append(f"{system}, {file_mb} MiB, IOPS {iops}: {last_line}")
            print(f"vems: boot failed (attempt {attempt} of {ATTEMPTS}): {last_line}", flush=True)
            if attempt == ATTEMPTS:
                raise


def measure(configuration, options, scratch):
    system, file_mb, tier_mb, iops, readahead = configuration
    samples, tier_reports = {}, []
    for _ in range(options.runs):
        results, reports = measure_retried(configuration, options, scratch)
        tier_reports += [report for report in reports if report]
        for label, result in results.items():
            samples.setdefault(label, []).append(mb_per_s(result))
    lines = []
    for label, values in samples.items():
        line = {"kind": "vems", "system": system, "pattern": label.replace("-128k", ""),
                "file_mb": file_mb, "mb_per_s": round(statistics.median(values), 2),
                "readahead": readahead, "tier_mb": tier_mb if system not in ("formica-no-tier", "linux-ext4") else 0,
                "disk_iops": iops, "buffer_bytes": 131072 if label.endswith("-128k") or label == "seq-write"
                else (8192 if label == "seq-read" else RANDOM_BYTES),
                "runs": options.runs, "smp": SMP, "accel": "tcg"}
        lines.append(line)
    if tier_reports:
        report = tier_reports[-1]
        lines.append({"kind": "vems_tier", "file_mb": file_mb, "tier_mb": tier_mb, "disk_iops": iops,
                      "readahead": readahead, "writeback_runs": report.get("writeback_runs"),
                      "writeback_bytes": report.get("writeback_bytes"),
                      "average_run_bytes": report.get("average_run_bytes"),
                      "bypasses": report.get("bypasses"), "hits": report.get("hits"),
                      "misses": report.get("misses")})
    return lines


def measure_all(options):
    """Every configuration, with a progress line before each; the vems and vems_tier lines."""
    lines = []
    todo = list(configurations(options))
    with tempfile.TemporaryDirectory() as scratch:
        for index, configuration in enumerate(todo, 1):
            print(f"vems: [{index}/{len(todo)}] {configuration[0]}, {configuration[1]} MiB file, "
                  f"tier {configuration[2]} MiB, disk IOPS {configuration[3] or 'unthrottled'}, "
                  f"read-ahead {'on' if configuration[4] else 'off'}", flush=True)
            for line in measure(configuration, options, Path(scratch)):
                print(client.JSON_MARKER + json.dumps(line, separators=(",", ":")), flush=True)
                lines.append(line)
    return lines


def ratio(lines, pattern, numerator, denominator, **match):
    def find(system):
        for line in lines:
            if (line["kind"] == "vems" and line["system"] == system and line["pattern"] == pattern
                    and all(line.get(k) == v for k, v in match.items())):
                return line["mb_per_s"]
        return None
    top, bottom = find(numerator), find(denominator)
    return round(top / bottom, 2) if top and bottom else None


def report(lines, options):
    table = ["| system | pattern | buffer | file MiB | tier MiB | disk IOPS | read-ahead | MiB/s |",
             "|---|---|---|---|---|---|---|---|"]
    for line in lines:
        if line["kind"] == "vems":
            table.append(f"| {line['system']} | {line['pattern']} | {line['buffer_bytes'] // 1024} KiB | "
                         f"{line['file_mb']} | {line['tier_mb']} | {line['disk_iops'] or 'unthrottled'} | "
                         f"{'on' if line['readahead'] else 'off'} | {line['mb_per_s']} |")
    goals = ["", "| goal (seed 001 issue) | file MiB | disk IOPS | measured |", "|---|---|---|---|"]
    for iops in options.disk_iops:
        for file_mb in options.file_mb:
            match = dict(file_mb=file_mb, disk_iops=iops, readahead=True)
            tier_match = dict(match, tier_mb=options.tier_mb[0])
            goals.append(f"| random fsynced 4 KiB writes: tier / dm-writecache >= 1.5 | {file_mb} | {iops} | "
                         f"{ratio(lines, 'rand-write-fsync', 'formica', 'linux-dm-writecache', **tier_match)} |")
            goals.append(f"| random fsynced 4 KiB writes: tier / no tier >= 5 | {file_mb} | {iops} | "
                         f"{ratio(lines, 'rand-write-fsync', 'formica', 'formica-no-tier', **match)} |")
            goals.append(f"| sequential reads (8 KiB calls): tier / dm-writecache >= 1.0 | {file_mb} | {iops} | "
                         f"{ratio(lines, 'seq-read', 'formica', 'linux-dm-writecache', **tier_match)} |")
    runs = [line for line in lines if line["kind"] == "vems_tier"]
    count, written = sum(r["writeback_runs"] or 0 for r in runs), sum(r["writeback_bytes"] or 0 for r in runs)
    goals.append(f"| average write-back run >= 64 KiB (every pass of every boot) | all | all | "
                 f"{written / max(count, 1) / 1024:.0f} KiB ({count} runs) |")
    failed = ["", "Boots that failed and were run again:", ""] + [f"- {b}" for b in FAILED_BOOTS] if FAILED_BOOTS else []
    text = (f"# The NVM tier (seed 001) beside Linux's dm-writecache: TCG, {SMP} vCPUs, {MEMORY}, "
            f"median of {options.runs} runs\n\n" + "\n".join(table) + "\n" + "\n".join(goals + failed) + "\n")
    (OUT / "vems.md").write_text(text)
    print(text)


def plot(lines):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as pyplot
    except ImportError:
        print("vems: no matplotlib; no plot")
        return
    patterns = ["seq-write", "seq-read", "rand-read", "rand-write-fsync"]
    figure, axes = pyplot.subplots(1, len(patterns), figsize=(4 * len(patterns), 3.5))
    for axis, pattern in zip(axes, patterns):
        for system in SYSTEMS:
            points = sorted((line["file_mb"], line["mb_per_s"]) for line in lines
                            if line["kind"] == "vems" and line["system"] == system
                            and line["pattern"] == pattern and line["readahead"]
                            and line["disk_iops"] == 0 and line["buffer_bytes"] in (131072, 4096)
                            and line["tier_mb"] in (0, min(l["tier_mb"] for l in lines
                                                            if l["kind"] == "vems" and l["tier_mb"])))
            if points:
                axis.plot(*zip(*points), marker="o", label=system)
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_title(pattern)
        axis.set_xlabel("file (MiB)")
        axis.set_ylabel("MiB/s")
    if axes[0].get_legend_handles_labels()[0]:
        axes[0].legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(OUT / "vems.png", dpi=100)


def main():
    options = arguments()
    OUT.mkdir(parents=True, exist_ok=True)
    linux_guest.build()  # what changed only: fileio and dm_writecache_setup among it
    lines = measure_all(options)
    (OUT / "vems.json").write_text("".join(json.dumps(line) + "\n" for line in lines))
    report(lines, options)
    plot(lines)


if __name__ == "__main__":
    main()
