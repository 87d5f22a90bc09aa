# BLK's NVM tier (--nvm-tier, docs/storage.md "The NVM tier"): Bonnie's updates through the
# tier at placements 1 and 5 match the host replay once the tier is flushed; QEMU killed during
# metadata churn and during writes, then a boot with the same tier file and `tier flush`:
# e2fsck -fn clean on the disk alone and every fsynced file intact; flush, detach and a boot
# without the tier give identical files; a tier of another disk, a corrupted tier and an
# NVDIMM too small are refused with their messages, the disk and the tier file untouched; a
# mapping four times larger than the tier maps (the set CLOCK revokes lines only mappings see).
import hashlib
import shutil
import subprocess

import pytest

import formica
import disk_image  # noqa: E402 (build/, on the path through formica)
from test_bonnie import UPDATE_ARGS, dump, replay
from test_journal import churn_and_kill, churn_bytes, debugfs_cat
from test_mmap import stored_pattern
from nvm_order import check_tier_order, records_of

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 900
TIER_SIZE = "64M"
DISK_IMAGE = formica.OUT_DIR / "disk.img"
TIER_HEADER = 4096


def disk_copy(tmp_path, name="disk.img"):
    copy = tmp_path / name
    shutil.copyfile(DISK_IMAGE, copy)
    return copy


def tier_flag(tmp_path, size=TIER_SIZE):
    return ["--nvm-tier", f"{tmp_path / 'tier.nvm'}:{size}"]


def boot(commands, disk, *flags, cores=3, placement="1", timeout=TIMEOUT):
    return formica.run("--smp", str(cores), "--accel", "tcg", "--placement", placement,
                       "--disk", str(disk), *flags, "--cmd", commands, timeout=timeout)


def e2fsck_clean(image):
    check = subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tier_line(result):
    lines = result.kinds("tier")
    assert lines, result.describe()
    return lines[-1]


def bonnie_updates(path="/rb.dat", seed=7, mode="readblock"):
    return (f"run bonnie -p {UPDATE_ARGS['procs']} -m {mode} -n {UPDATE_ARGS['refs']} "
            f"-u {UPDATE_ARGS['update_pct']} --seed {seed} -f {path}")


@pytest.mark.parametrize("placement", ["1", "5"])
def test_bonnie_through_the_tier_matches_replay(tmp_path, placement):
    disk = disk_copy(tmp_path)
    runs = [("readblock", "/rb.dat", 7), ("readbyte", "/rby.dat", 9)]
    commands = "; ".join(bonnie_updates(path, seed, mode) for mode, path, seed in runs)
    result = boot(f"{commands}; tier; tier flush; tier", disk, *tier_flag(tmp_path),
                  placement=placement)
    assert result.rc == 0, result.describe()
    assert "blk: tier: formatted the NVDIMM" in result.text, result.describe()
    assert len(result.kinds("bonnie")) == len(runs), result.describe()
    before, after = result.kinds("tier")[-2:]
    assert before["state"] == "attached" and before["hits"] > 0 and before["dirty_lines"] > 0
    # a readblock hit lends the line itself (bound to a block ICA of its page), never a copy
    assert before["direct_lends"] > 0 and before["lend_copies"] == 0, before
    assert after["dirty_lines"] == 0 and after["writeback_runs"] > 0, after
    e2fsck_clean(disk)  # the disk alone, after the flush
    for mode, path, seed in runs:
        expected = replay(seed, tmp_path / f"expected-{seed}")
        assert dump(disk, path, tmp_path / f"actual-{seed}") == expected, mode


def test_mmap_of_a_file_on_the_tier_lends_its_lines(tmp_path):
    # 12 MiB: 3,072 lines lent into mappings, more than the 2,048 bound at once, so
    # bindings are recycled; unlink while mapped retires lines still lent
    disk = disk_copy(tmp_path)
    result = boot("run mmaptest read /mapped.dat 12; run mmaptest unlink /gone.dat; "
                  "run mmaptest lent; tier; tier flush", disk, *tier_flag(tmp_path))
    assert result.rc == 0, result.describe()
    checks = {line["check"]: line for line in result.kinds("mmap")}
    for name in ["map shared", "shared equals pread", "map private", "private equals pread",
                 "two mappings of one page agree", "lends all ended"]:
        assert checks[name]["ok"], result.describe()
    assert all(line["ok"] for line in checks.values()), result.describe()
    assert [line["blocks"] for line in result.kinds("mmap_lent")] == [0], result.describe()
    report = result.kinds("tier")[0]
    assert report["direct_lends"] > 2048 and report["lend_copies"] == 0, report
    assert "cannot be lent itself" not in result.text, result.describe()
    assert "tier: every dirty line written back" in result.text, result.describe()
    e2fsck_clean(disk)


def test_shared_stores_into_tier_lines_reach_the_file(tmp_path):
    # a writable mapping lends the line itself: stores land in the NVM line, msync and
    # pread see them, and after `tier flush` the disk alone holds them
    disk = disk_copy(tmp_path)
    result = boot("run mmaptest shared /shared.dat @2; run mmaptest private /private.dat; "
                  "run mmaptest lent; tier; tier flush", disk, *tier_flag(tmp_path))
    assert result.rc == 0, result.describe()
    checks = {line["check"]: line for line in result.kinds("mmap")}
    for name in ["another mapping sees the stores", "msync", "pread sees the stores",
                 "pread sees the second store", "pwrite seen in the mapping", "lends all ended"]:
        assert checks[name]["ok"], result.describe()
    assert all(line["ok"] for line in checks.values()), result.describe()
    assert "a writable map of" not in result.text, result.describe()
    assert result.kinds("tier")[0]["lend_copies"] == 0, result.describe()
    assert "tier: every dirty line written back" in result.text, result.describe()
    e2fsck_clean(disk)


def test_msynced_stores_into_tier_lines_survive_a_killed_qemu(tmp_path):
    disk = disk_copy(tmp_path)
    lines = churn_and_kill(disk, 1, *tier_flag(tmp_path),
                           commands="run mmaptest crash /crash.dat @2", marker="mmap_synced")
    assert not [line for line in lines if '"ok":false' in line], "\n".join(lines)
    result = boot("tier flush", disk, *tier_flag(tmp_path), timeout=300)
    assert result.rc == 0 and "tier refused" not in result.text, result.describe()
    e2fsck_clean(disk)
    data = debugfs_cat(disk, "/crash.dat")
    assert len(data) == 64 * 4096, len(data)
    for page in range(2, 64):
        assert data[page * 4096:(page + 1) * 4096] == bytes([0x40 + page]) * 4096, page
    assert data[4096:8192] == b"\x99" * 4096  # stored again after a write-protecting pass


def check_after_kill(tmp_path, image, lines):
    """The same tier file again: FS replays its journal through the tier; `tier flush` puts
    everything on the disk, which alone is then clean and holds every fsynced file."""
    fsynced = [entry for entry in formica.parse_json_lines(lines)
               if entry["kind"] == "churn_fsynced"]
    assert not [entry for entry in formica.parse_json_lines(lines) if entry["kind"] == "churn_error"]
    result = boot("tier; tier flush", image, *tier_flag(tmp_path), timeout=300)
    assert result.rc == 0, result.describe()
    assert "fs: mounted ext3 (ordered journal)" in result.text, result.describe()
    assert "tier refused" not in result.text, result.describe()
    assert "tier: every dirty line written back" in result.text, result.describe()
    e2fsck_clean(image)
    for entry in fsynced:
        assert debugfs_cat(image, entry["path"]) == churn_bytes(entry["seed"], entry["bytes"]), \
            entry
    return result, len(fsynced)


@pytest.mark.parametrize("seconds", [0.3, 1.0, 2.5])
def test_kill_during_churn_keeps_fsynced_data(tmp_path, seconds):
    image = disk_copy(tmp_path)
    lines = churn_and_kill(image, seconds, *tier_flag(tmp_path))
    assert any("blk: tier: formatted" in line for line in lines), "\n".join(lines)
    result, fsynced = check_after_kill(tmp_path, image, lines)
    print(f"killed {seconds} s into churn: {fsynced} fsynced files intact, "
          f"{tier_line(result)['dirty_lines']} dirty lines found")


@pytest.mark.parametrize("seconds", [1.0, 4.0])
def test_kill_during_writes(tmp_path, seconds):
    image = disk_copy(tmp_path)
    lines = churn_and_kill(image, seconds, *tier_flag(tmp_path), commands=bonnie_updates(),
                           marker="fs: mounted")
    check_after_kill(tmp_path, image, lines)


def test_flush_detach_then_boot_without_the_tier(tmp_path):
    disk = disk_copy(tmp_path)
    first = boot(f"{bonnie_updates()}; run churn 28; cksum /rb.dat; tier detach; tier; "
                 "cksum /rb.dat", disk, *tier_flag(tmp_path))
    assert first.rc == 0, first.describe()
    assert "tier detached" in first.text and tier_line(first)["state"] == "detached", \
        first.describe()
    sums = [line for line in first.lines if line.endswith(" /rb.dat") and line[0].isdigit()]
    assert len(sums) == 2 and sums[0] == sums[1], first.describe()
    e2fsck_clean(disk)
    second = boot("cksum /rb.dat", disk)
    assert sums[0] in second.lines, second.describe()
    fsynced = [entry for entry in first.kinds("churn_fsynced")]
    for entry in fsynced:
        assert debugfs_cat(disk, entry["path"]) == churn_bytes(entry["seed"], entry["bytes"])
    third = boot("tier", disk, *tier_flag(tmp_path))  # a detached tier starts clean
    assert "the NVDIMM was detached: starting clean" in third.text, third.describe()


def refused_untouched(tmp_path, disk, why):
    tier_file = tmp_path / "tier.nvm"
    disk_before, tier_before = digest(disk), digest(tier_file)
    result = boot("tier; ls /", disk, *tier_flag(tmp_path), timeout=300)
    assert "blk: tier refused: " in result.text and why in result.text, result.describe()
    assert "fs: mounted" not in result.text, result.describe()
    assert tier_line(result)["state"] == "refused", result.describe()
    assert digest(disk) == disk_before and digest(tier_file) == tier_before
    return result


def leave_dirty_lines(tmp_path, disk):
    """A boot that writes (Bonnie's updates) and ends with dirty lines in the tier."""
    result = boot(f"tier flush; {bonnie_updates()}; tier", disk, *tier_flag(tmp_path))
    assert result.rc == 0, result.describe()
    assert tier_line(result)["dirty_lines"] > 0, result.describe()


def test_a_tier_of_another_disk_is_refused(tmp_path):
    leave_dirty_lines(tmp_path, disk_copy(tmp_path))
    other = disk_image.make(tmp_path / "other.img", "ext3", 4096, "32M")
    refused_untouched(tmp_path, other, "sectors; this disk is f")
    copy = disk_copy(tmp_path, "copy.img")  # the same size and bytes: its serial tells it apart
    refused_untouched(tmp_path, copy, "written for disk serial f")
    # the operator's choice: `tier format` takes the tier over for this disk, a restarted FS mounts
    taken = boot("tier format; tier; kill fs; sleep 3000; ls /", copy, *tier_flag(tmp_path))
    assert "blk: tier formatted for this disk: the refused tier's lines dropped" in taken.text, \
        taken.describe()
    assert tier_line(taken)["state"] == "attached", taken.describe()
    assert "fs: mounted ext3" in taken.text and any("README.txt" in line for line in taken.lines), \
        taken.describe()


def test_a_corrupted_tier_is_refused(tmp_path):
    disk = disk_copy(tmp_path)
    leave_dirty_lines(tmp_path, disk)
    tier_file = tmp_path / "tier.nvm"
    data = bytearray(tier_file.read_bytes())
    tag = next(offset for offset in range(TIER_HEADER, TIER_HEADER + 16 * 4096, 8)
               if any(data[offset:offset + 8]))
    data[tag + 2] ^= 0x10  # a scribbled tag: its block number changes, its check fails
    tier_file.write_bytes(bytes(data))
    refused_untouched(tmp_path, disk, "corrupted tags")
    data[0:8] = b"SCRIBBLE"  # and a header that is no tier's
    data[128:136] = b"SCRIBBLE"
    tier_file.write_bytes(bytes(data))
    refused_untouched(tmp_path, disk, "holds no valid tier header")


def test_an_nvdimm_too_small_is_refused(tmp_path):
    disk = disk_copy(tmp_path)
    result = boot("tier; ls /", disk, *tier_flag(tmp_path, "2M"), timeout=300)
    assert result.rc == 0, result.describe()
    assert "blk: tier refused: the NVDIMM of 2048 KiB is too small" in result.text, \
        result.describe()
    assert "fs: mounted" in result.text, result.describe()
    assert tier_line(result)["state"] == "too-small", result.describe()


def test_a_blk_restart_finds_its_lines_and_an_idle_pass_writes_them(tmp_path):
    disk = disk_copy(tmp_path)
    result = boot(f"{bonnie_updates()}; cksum /rb.dat; kill blk; sleep 1500; cksum /rb.dat; tier; "
                  "sleep 7000; tier", disk, *tier_flag(tmp_path))
    assert result.rc == 0, result.describe()
    assert '"server":"blk"' in result.text, result.describe()  # init restarted it
    sums = [line for line in result.lines if line.endswith(" /rb.dat") and line[0].isdigit()]
    assert len(sums) == 2 and sums[0] == sums[1], result.describe()
    after_restart, after_idle = result.kinds("tier")
    assert after_restart["dirty_lines"] > 0 and after_restart["passes"] == 0, after_restart
    assert after_idle["dirty_lines"] == 0 and after_idle["passes"] == 1, after_idle


def test_write_through_keeps_the_disk_current(tmp_path):
    disk = disk_copy(tmp_path)
    result = boot(f"{bonnie_updates()}; sync; tier", disk, *tier_flag(tmp_path),
                  "--append", "blk_tier=write-through")
    assert result.rc == 0, result.describe()
    line = tier_line(result)
    assert line["write_through"] is True and line["dirty_lines"] == 0, line
    e2fsck_clean(disk)  # no tier flush: the disk alone holds every write
    assert dump(disk, "/rb.dat", tmp_path / "actual") == replay(7, tmp_path / "expected")


def test_the_tiers_stores_are_durable_in_order(tmp_path):
    """The guest's own order of NVM writes, flushes and fences (nvm_record), replayed."""
    disk = disk_copy(tmp_path)
    result = boot(f"run churn 12; {bonnie_updates()}; tier flush", disk, *tier_flag(tmp_path),
                  "--append", "nvm_record=65536")
    assert result.rc == 0, result.describe()
    assert "made durable with clwb and sfence" in result.text, result.describe()
    layouts = [line for line in result.kinds("nvm_layout") if line["who"] == "tier"]
    dumps = [line for line in result.kinds("nvm_order") if line["who"] == "tier"]
    assert len(layouts) == 1 and dumps and dumps[-1]["last"] is True, result.describe()
    assert dumps[-1]["dropped"] == 0, dumps[-1]
    records = records_of(dumps, "tier")
    tag_writes = [r for r in records if r[0] == "w" and r[2] == 8
                  and layouts[0]["tags_offset"] <= r[1] < layouts[0]["lines_offset"]]
    assert len(tag_writes) > 100, len(tag_writes)
    assert check_tier_order(records, layouts[0]) == []


def test_several_shards_leave_the_tier_unused(tmp_path):
    result = boot("ls /; tier", disk_copy(tmp_path), *tier_flag(tmp_path), cores=2, placement="9")
    assert result.rc == 0, result.describe()
    assert "the tier serves one shard for now: caching in DRAM" in result.text, result.describe()
    assert tier_line(result)["state"] == "none", result.describe()


# A tier of 2 MiB (4 sets of 127 lines) under 8 MiB mapped shared writable, read and stored whole,
# msync'ed: four times the tier's lines and more than a process's 512 mapping lends. The tier's
# CLOCK takes a line only mappings see (its mappings revoked; a dirty one made clean by a pass
# first, in line order) and reuses it, as BLK's DRAM CLOCK does; without that a fault in a set
# whose lines are all mapped finds none, gets -E_BUSY until the kernel gives up and the program
# ends (142). "@2": the program on another core than BLK's (each revoke a cross-core message).
@pytest.mark.parametrize("core", ["", "@2"])
def test_a_mapping_larger_than_the_tier_revokes_mapped_lines(tmp_path, core):
    disk = disk_copy(tmp_path)
    result = boot(f"run mmaptest lent; run mmaptest evict /big.dat 8 msync {core}; "
                  "run mmaptest lent; tier; tier flush; tier", disk, *tier_flag(tmp_path, "2M"),
                  "--append", "blk_tier_sets=4", timeout=300)
    assert result.rc == 0, result.describe()
    checks = {line["check"]: line for line in result.kinds("mmap")}
    for name in ["map shared writable", "every mapped page equals pread", "msync",
                 "every stored page equals pread", "pread reads every store", "unmap",
                 "lends all ended"]:
        assert checks[name]["ok"], result.describe()
    assert all(line["ok"] for line in checks.values()), result.describe()
    assert "tier: every line of a set lent: taking lines only mappings see" in result.text, \
        result.describe()
    assert [line["blocks"] for line in result.kinds("mmap_lent")] == [0, 0], result.describe()
    during, flushed = result.kinds("tier")[-2:]
    assert during["sets"] == 4 and during["lines"] * 4096 * 3 < 8 << 20, during
    assert flushed["dirty_lines"] == 0, flushed
    e2fsck_clean(disk)  # the disk alone, after the flush
    data = debugfs_cat(disk, "/big.dat")
    assert len(data) == 8 << 20, len(data)
    expected = stored_pattern(8 << 20)
    wrong = [page for page in range(2048)
             if data[page * 4096:(page + 1) * 4096] != expected[page * 4096:(page + 1) * 4096]]
    assert not wrong, f"{len(wrong)} pages not stored on the disk, first {wrong[:8]}"
