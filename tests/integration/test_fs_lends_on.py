# FS lends on the blocks it borrows from BLK (docs/storage.md, "FS lends on what it borrows"):
# Bonnie's cached readblocks are answered by FS without BLK (BLK takes a fraction of FS's
# requests) and read what the updates wrote; a file larger than FS's borrowed blocks still
# matches the host replay byte for byte; a BLK killed while FS lends its blocks on: the kernel
# refuses the lend on of the ended shard's block, FS lets its blocks go and asks the restarted
# shard, and the readers read the right bytes; a program that keeps a block FS lent on does
# not make FS let it go while Bonnie churns FS's slots (FS would otherwise hold more of BLK's
# cache than its slots).
import subprocess

import pytest

import formica
from test_blk_shards import assert_matches_replay, bonnie_command, disk_copy
from test_storage_servers import assert_clean

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 600
PIN_FILE_BLOCKS = 16  # tests/programs/hostile: `hostile reader` reads /hostile.pin, all 'p'


def boot(disk, commands):
    return formica.run("--smp", "3", "--placement", "5", "--disk", str(disk), "--cmd", commands,
                       timeout=TIMEOUT)


def requests_taken(result):
    """Per `servers` command, the requests FS's and BLK's instance 0 had taken."""
    groups, current = [], {}
    for line in result.jsons:
        if line["kind"] != "server_instance" or line["index"] != 0:
            continue
        if line["server"] in current:
            groups.append(current)
            current = {}
        current[line["server"]] = line["taken"]
    return groups + [current]


def test_cached_readblocks_are_answered_by_fs(tmp_path):
    disk = disk_copy(tmp_path)
    large = {"procs": 2, "refs": 1500, "update_pct": 30}  # 256 blocks: more than FS borrows
    commands = ("ls /; servers; run bonnie -p 1 -m readblock -n 4000 -u 10 -f /small.dat; "
                f"servers; {bonnie_command('run', 'readblock', '/large.dat', 5, **large)}")
    result = boot(disk, commands)
    assert result.rc == 0, result.describe()
    children = result.kinds("bonnie_child")
    assert len(children) == 3, result.describe()
    assert all(child["mismatches"] == 0 and child["error"] == 0 for child in children), children
    before, after = [group for group in requests_taken(result) if group][:2]
    fs = after["fs"] - before["fs"]
    blk = after["blk"] - before["blk"]
    # 4,000 readblocks of a 32-block file and ~400 updates: without borrowing BLK takes a
    # request per readblock; with it, the updates', the 32 borrows' and the file's writes.
    assert fs >= 4000 and blk < fs // 3, (fs, blk)
    assert "return failed" not in result.text, result.describe()
    assert_clean(disk)
    assert_matches_replay(disk, tmp_path, "/large.dat", 5, **large)


def write_pin_file(disk, tmp_path):
    host = tmp_path / "pin.bin"
    host.write_bytes(b"p" * (PIN_FILE_BLOCKS * 4096))
    subprocess.run(["debugfs", "-w", "-R", f"write {host} /hostile.pin", str(disk)],
                   check=True, capture_output=True)


def test_blk_killed_while_fs_lends_its_blocks_on(tmp_path):
    disk = disk_copy(tmp_path)
    write_pin_file(disk, tmp_path)
    # The reader reads the file, then again through the same handle after the kill: FS has
    # no reason to ask BLK anything before it lends on the first block.
    result = boot(disk, "start hostile reader 1500; sleep 500; kill blk; wait; "
                        "run hostile reader; servers")
    assert result.rc == 0, result.describe()
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()
    assert "hostile exited with code 0" in result.text, result.describe()
    assert [line["server"] for line in result.kinds("server_restart")] == ["blk"], \
        result.describe()
    # FS borrowed the file's blocks from the killed shard: its first lend on after the kill
    # was refused, and it let them go.
    assert "fs: the lend on of disk block" in result.text, result.describe()
    assert "(BLK shard 0) refused: server ended before answering" in result.text, result.describe()
    assert "return failed" not in result.text, result.describe()
    assert_clean(disk)


def test_a_block_lent_on_is_kept_while_others_churn_the_slots(tmp_path):
    disk = disk_copy(tmp_path)
    # Bonnie on 256 blocks: its hits earn FS replacements and its misses land in every one of
    # FS's 48 slots, the held block's too.
    result = formica.run("--smp", "2", "--disk", str(disk), "--cmd",
                         "start hostile holdfs 6000; sleep 500; "
                         "run bonnie -p 1 -m readblock -n 8000 -s 1M -f /churn.dat; wait",
                         timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    holds = result.kinds("hostile_hold")
    assert len(holds) == 1, result.describe()
    bonnie_at = next(i for i, line in enumerate(result.jsons) if line["kind"] == "bonnie")
    hold_at = next(i for i, line in enumerate(result.jsons) if line["kind"] == "hostile_hold")
    assert bonnie_at < hold_at, "Bonnie ended after the hold: hold longer"
    # FS's lend and the program's, before and after: FS kept it
    assert holds[0] == {"kind": "hostile_hold", "before": 2, "after": 2}, holds
    children = result.kinds("bonnie_child")
    assert all(child["mismatches"] == 0 and child["error"] == 0 for child in children), children
    assert_clean(disk)
