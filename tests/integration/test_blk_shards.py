# BLK as two shards (docs/storage.md "Shards"): placement `blk 0,1` on 2 cores, FS one instance.
# fstest passes (its two-block readblocks across a stripe's end answered by FS, the others by a
# shard) and e2fsck stays clean; blkread reads a host-written file's blocks across three stripe
# ends through the shards with the host's cksum, each shard refuses the other's blocks and both
# took requests; Bonnie readblock and readbyte with updates on a 1 MiB file (four stripes) match
# the host replay (virtio-blk and NVMe: DK serves both shards); a shard killed during Bonnie
# replays its own kept journal and nothing is lost; QEMU killed during ext3 churn with the shards
# on two other cores: the journal's barriers wait for both, so the replay leaves e2fsck clean
# and every fsynced file intact.
import os
import shutil
import subprocess
import sys

import pytest

import formica
from test_journal import check_after_crash, churn_and_kill
from test_storage_servers import assert_all_cases_passed, assert_clean, assert_files_on_disk

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 900
REPLAY = formica.REPO_ROOT / "build" / "bench" / "bonnie_replay.py"
STRIPE = 64  # BLK_STRIPE_BLOCKS
PLACEMENT = "fs 0\nblk 0,1\ndk 0\npager 0\napp 0,1\n"
HOST_FILE_BLOCKS = 200
DIRECT_BLOCKS = 12  # an ext3 inode's direct blocks; the indirect block follows them on the disk
E_INVALID = -1  # lib/include/formica/errors.h
BONNIE_FILE_BYTES = 1024 * 1024  # 256 blocks: four stripes, both shards
UPDATE_RUNS = [("readblock", "/rb.dat", 7), ("readbyte", "/rby.dat", 9)]
UPDATE_ARGS = {"procs": 2, "refs": 1500, "update_pct": 50}


def placement_file(tmp_path):
    path = tmp_path / "shards.conf"
    path.write_text(PLACEMENT)
    return path


def disk_copy(tmp_path):
    copy = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", copy)
    return copy


def boot(tmp_path, disk, commands, bus="virtio"):
    return formica.run("--smp", "2", "--accel", "tcg", "--placement",
                       str(placement_file(tmp_path)), "--disk", str(disk), "--disk-bus", bus,
                       "--cmd", f"{commands}; servers", timeout=TIMEOUT)


def assert_two_shards(result):
    """The shell's `servers` (the last command of every boot here): BLK's two instances, on
    cores 0 and 1."""
    shards = [(line["index"], line["core"]) for line in result.kinds("server_instance")
              if line["server"] == "blk" and line["instances"] == 2]
    assert sorted(shards) == [(0, 0), (1, 1)], result.describe()


def host_cksum(data):
    out = subprocess.run(["cksum"], input=data, capture_output=True, check=True).stdout
    return int(out.split()[0])


def write_host_file(tmp_path, disk):
    """A file of random blocks written into the image on the host: the first disk block of its
    run after the direct blocks (ext3's first indirect block lies between), the run's length
    and its bytes."""
    data = os.urandom(HOST_FILE_BLOCKS * 4096)
    source = tmp_path / "shards.bin"
    source.write_bytes(data)
    subprocess.run(["debugfs", "-w", "-R", f"write {source} /shards.bin", str(disk)],
                   check=True, capture_output=True)

    def disk_block(index):
        out = subprocess.run(["debugfs", "-R", f"bmap /shards.bin {index}", str(disk)],
                             check=True, capture_output=True, text=True).stdout
        return int(out.split()[-1])

    first = disk_block(DIRECT_BLOCKS)
    blocks = HOST_FILE_BLOCKS - DIRECT_BLOCKS
    assert disk_block(HOST_FILE_BLOCKS - 1) == first + blocks - 1, "the host file is not contiguous"
    return first, blocks, data[DIRECT_BLOCKS * 4096:]


def expected_parts(first, blocks):
    """How many pieces blk_run_part cuts the run into on two shards."""
    return len({(block // STRIPE) for block in range(first, first + blocks)})


def test_fstest_and_blkread_on_two_shards(tmp_path):
    disk = disk_copy(tmp_path)
    first, blocks, data = write_host_file(tmp_path, disk)
    result = boot(tmp_path, disk, f"run fstest; run --driver blkread {first} {blocks}")
    assert result.rc == 0, result.describe()
    assert_two_shards(result)
    assert_all_cases_passed(result, ["readblock_across_stripes", "library_readblock_across_stripes"])
    stripes = result.kinds("fstest_stripes")
    assert len(stripes) == 1 and stripes[0]["shards"] == 2, result.describe()
    # 79 pairs of an 80-block file: those across a stripe's end answered by FS, the rest by BLK.
    assert stripes[0]["answered_by_fs"] >= 1 and stripes[0]["answered_by_blk"] >= 60, stripes
    assert stripes[0]["answered_by_fs"] + stripes[0]["answered_by_blk"] == 79, stripes
    stats = result.kinds("blkstats")
    assert stats and stats[0]["shards"] == 2 and stats[0]["capacity"] == 2048, stats
    [read] = result.kinds("blkread")
    assert read["shards"] == 2 and read["result"] == 0, read
    assert read["parts"] == expected_parts(first, blocks) >= 3, read
    assert read["cksum"] == host_cksum(data), read
    refusals = result.kinds("blkread_refusal")
    assert [line["shard"] for line in refusals] == [0, 1], result.describe()
    assert all(line["ok"] and line["foreign"] == E_INVALID and line["across"] == E_INVALID
               for line in refusals), refusals
    assert "is shard 1's, not shard 0's" in result.text, result.describe()
    assert "is shard 0's, not shard 1's" in result.text, result.describe()
    instances = result.kinds("blkread_instance")
    assert sorted(line["index"] for line in instances) == [0, 1], result.describe()
    assert sorted(line["core"] for line in instances) == [0, 1], instances
    assert all(line["taken"] > 0 for line in instances), instances  # each served its blocks
    assert_clean(disk)
    assert_files_on_disk(disk)


def replay(procs, refs, update_pct, seed, output):
    subprocess.run([sys.executable, str(REPLAY), "-p", str(procs), "-n", str(refs),
                    "-u", str(update_pct), "-s", str(BONNIE_FILE_BYTES), "--seed", str(seed),
                    "-o", str(output)], check=True)
    return output.read_bytes()


def dump(image, guest_path, output):
    subprocess.run(["debugfs", "-R", f"dump {guest_path} {output}", str(image)], check=True,
                   capture_output=True)
    return output.read_bytes()


def assert_matches_replay(disk, tmp_path, guest_path, seed, procs, refs, update_pct):
    expected = replay(procs, refs, update_pct, seed, tmp_path / f"expected-{seed}")
    actual = dump(disk, guest_path, tmp_path / f"actual-{seed}")
    assert len(actual) == len(expected), guest_path
    differing = [offset for offset in range(len(expected)) if actual[offset] != expected[offset]]
    assert not differing, f"{guest_path}: {len(differing)} bytes differ, first at {differing[:4]}"


def bonnie_command(verb, mode, path, seed, procs, refs, update_pct):
    return (f"{verb} bonnie -p {procs} -m {mode} -s {BONNIE_FILE_BYTES} -n {refs} "
            f"-u {update_pct} --seed {seed} -f {path}")


# NVMe: DK gives each shard's core its own queue pair (docs/drivers.md).
@pytest.mark.parametrize("bus", ["virtio", "nvme"])
def test_bonnie_updates_on_two_shards_match_replay(tmp_path, bus):
    disk = disk_copy(tmp_path)
    commands = "; ".join(bonnie_command("run", mode, path, seed, **UPDATE_ARGS)
                         for mode, path, seed in UPDATE_RUNS)
    result = boot(tmp_path, disk, commands, bus)
    assert result.rc == 0, result.describe()
    assert_two_shards(result)
    lines = result.kinds("bonnie")
    assert len(lines) == len(UPDATE_RUNS), result.describe()
    assert all(line["server_cycles"]["blk"] > 0 for line in lines), lines
    children = result.kinds("bonnie_child")
    assert all(child["mismatches"] == 0 and child["error"] == 0 for child in children), children
    assert_clean(disk)
    for _, path, seed in UPDATE_RUNS:
        assert_matches_replay(disk, tmp_path, path, seed, **UPDATE_ARGS)


def test_shard_killed_during_bonnie_recovers(tmp_path):
    disk = disk_copy(tmp_path)
    args = {"procs": 2, "refs": 40000, "update_pct": 20}
    commands = (f"{bonnie_command('start', 'readblock', '/kill.dat', 11, **args)}; "
                "sleep 1500; kill blk; wait")
    result = boot(tmp_path, disk, commands)
    assert result.rc == 0, result.describe()
    assert_two_shards(result)
    restarts = result.kinds("server_restart")
    assert [line["server"] for line in restarts] == ["blk"], result.describe()
    bonnie_at = next(i for i, line in enumerate(result.jsons) if line["kind"] == "bonnie")
    restart_at = next(i for i, line in enumerate(result.jsons)
                      if line["kind"] == "server_restart")
    assert bonnie_at > restart_at, "Bonnie ended before the kill: make it longer"
    # The killed shard had acknowledged writes only in its cache; it replayed its own journal.
    replays = result.kinds("blk_replay")
    assert len(replays) == 1 and replays[0]["blocks"] > 0, replays
    # `kill blk` names the shard nearest the shell; init restarted that instance, which
    # replayed that shard's journal.
    assert restarts[0]["instance"] == replays[0]["shard"] and restarts[0]["instances"] == 2, \
        (restarts, replays)
    children = result.kinds("bonnie_child")
    assert all(child["mismatches"] == 0 and child["error"] == 0 for child in children), children
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()
    assert_clean(disk)
    assert_matches_replay(disk, tmp_path, "/kill.dat", 11, **args)


# test_journal.py's power cut with BLK as two shards on cores 1 and 2 (`--smp 3`, as there):
# a commit block written after a barrier that waited for one shard only could reach the disk
# before the other shard's log copies, and the replay would then be wrong.
@pytest.mark.parametrize("seconds", [0.5, 1.5])
def test_crash_during_churn_on_two_shards(tmp_path, seconds):
    image = disk_copy(tmp_path)
    placement = tmp_path / "shards3.conf"
    placement.write_text("fs 0\nblk 1,2\ndk 0\npager 0\napp 0\n")
    flags = ("--placement", str(placement))
    lines = churn_and_kill(image, seconds, *flags)
    assert any("placement: file: fs=C0 blk=C1,C2 " in line for line in lines), "\n".join(lines)
    check_after_crash(image, lines, *flags)
