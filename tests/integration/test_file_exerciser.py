# The data-integrity exerciser (tests/programs/fileexerciser, docs/testing.md "The file
# exerciser"): seeded random operations of every kind the file library offers, each read checked
# against a shadow copy, on one FS (placements 1 and 5, with a reader on another core through the
# same FS at #5), on the multi-instance placement 9 (a reader through the replica while the owner
# writes and truncates, and the writer through the replica), and across kills and crashes of FS,
# BLK and DK mid-run. Each run ends with the file read back after an fsync; the test dumps it
# from the image and compares its cksum with the exerciser's, and e2fsck -fn must be clean.
# FORMICA_EXERCISER_OPERATIONS=N (make soak: 50,000) sets every run's operations, and the
# disruptions repeat once per 10,000 of them.
import os
import shutil
import subprocess

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

OPERATIONS = int(os.environ.get("FORMICA_EXERCISER_OPERATIONS", "0"))  # 0: each test's own
SMALL_FILE = "--max-file 256K --max-transfer 64K"  # the same blocks hit again and again


def operations(default):
    return OPERATIONS or default


def timeout_for(count):
    return 300 + count // 20  # generous: 50,000 operations take minutes on a loaded host


def boot(tmp_path, smp, placement, commands, count):
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    result = formica.run("--smp", str(smp), "--accel", "tcg", "--placement", placement,
                         "--disk", str(disk), "--cmd", commands, timeout=timeout_for(count))
    return result, disk


def exerciser(path, seed, count, extra=""):
    return f"fileexerciser -n {count} --seed {seed} -f {path} {extra}".strip()


def host_cksum(disk, path, tmp_path):
    dumped = tmp_path / "dumped"
    subprocess.run(["debugfs", "-R", f"dump {path} {dumped}", str(disk)], check=True,
                   capture_output=True)
    crc, size = subprocess.run(["cksum", str(dumped)], check=True, capture_output=True,
                               text=True).stdout.split()[:2]
    return int(crc), int(size)


def check_runs(result, disk, tmp_path, paths, count):
    """Every run finished its operations with no mismatch, its reader (if any) too, and the
    file on the image is what the run's shadow copy says."""
    runs = {line["path"]: line for line in result.kinds("fileexerciser")}
    assert sorted(runs) == sorted(paths), result.describe()
    for path in paths:
        run = runs[path]
        assert run["ok"] and run["done"] == count, result.describe()
        if run["reader_core"] >= 0:
            assert run["reader_exit"] == 0, result.describe()
        assert host_cksum(disk, path, tmp_path) == (run["cksum"], run["size"]), path
    assert not result.kinds("fileexerciser_mismatch"), result.describe()
    check = subprocess.run(["e2fsck", "-fn", str(disk)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def check_readers(result, cores):
    readers = result.kinds("fileexerciser_reader")
    assert sorted(reader["core"] for reader in readers) == sorted(cores), result.describe()
    assert all(reader["ok"] and reader["reads"] > 0 for reader in readers), readers


def test_one_fs_on_the_applications_core(tmp_path):
    count = operations(3000)
    runs = [("/fx1.dat", 101, ""), ("/fx2.dat", 102, SMALL_FILE)]
    commands = "; ".join(f"run {exerciser(path, seed, count, extra)}"
                         for path, seed, extra in runs)
    result, disk = boot(tmp_path, 1, "1", commands, 2 * count)
    assert result.rc == 0, result.describe()
    check_runs(result, disk, tmp_path, [path for path, _, _ in runs], count)


def test_one_fs_on_its_own_core_with_a_reader(tmp_path):
    # #5: FS on C1, BLK on C2. The second run has a reader on C2: one FS serves both, so every
    # byte the reader sees must be in its window (a check of the reader itself, beside the
    # replica's below).
    count = operations(3000)
    runs = [("/fx1.dat", 201, ""), ("/fx2.dat", 202, f"{SMALL_FILE} --reader 2")]
    commands = "; ".join(f"run {exerciser(path, seed, count, extra)} @0"
                         for path, seed, extra in runs)
    result, disk = boot(tmp_path, 3, "5", commands, 3 * count)
    assert result.rc == 0, result.describe()
    check_runs(result, disk, tmp_path, [path for path, _, _ in runs], count)
    check_readers(result, [2])


def test_writer_through_the_replica(tmp_path):
    # Placement 9 on two cores: the writer on C1, its every change forwarded by the replica to
    # the owner and its every read (checked exactly) served by the replica; a reader on C0
    # through the owner.
    count = operations(3000)
    commands = f"run {exerciser('/fx.dat', 301, count, '--reader 0')} @1; servers fs"
    result, disk = boot(tmp_path, 2, "9", commands, 2 * count)
    assert result.rc == 0, result.describe()
    check_runs(result, disk, tmp_path, ["/fx.dat"], count)
    check_readers(result, [0])
    instances = {line["index"]: line["taken"] for line in result.kinds("server_instance")
                 if line["server"] == "fs"}
    assert instances[0] > 0 and instances[1] > 0, instances


@pytest.mark.parametrize("extra", ["", SMALL_FILE])
def test_reader_through_the_replica_while_the_owner_truncates(tmp_path, extra):
    # Placement 9 on two cores: the writer on C0 (the owner's), the reader on C1 reads through
    # the replica while the owner writes and truncates. Fails while a replica can serve data
    # of blocks a truncate freed (issue 39, item 2): a read whose count is from before the
    # truncate, its bytes zeros or another offset's.
    count = operations(3000)
    commands = f"run {exerciser('/fx.dat', 401, count, extra + ' --reader 1')} @0"
    result, disk = boot(tmp_path, 2, "9", commands, 2 * count)
    assert result.rc == 0, result.describe()
    check_runs(result, disk, tmp_path, ["/fx.dat"], count)
    check_readers(result, [1])


def disruptions(hits, count, pause_ms):
    rounds = max(1, count // 10000)
    return "; ".join(f"sleep {pause_ms}; {hit}" for _ in range(rounds) for hit in hits)


def check_disrupted(result, hits, count):
    restarts = result.kinds("server_restart")
    assert len(restarts) == len(hits) * max(1, count // 10000), result.describe()
    done_at = max(i for i, line in enumerate(result.jsons) if line["kind"] == "fileexerciser")
    last_restart_at = max(i for i, line in enumerate(result.jsons)
                          if line["kind"] == "server_restart")
    assert done_at > last_restart_at, "the exerciser ended before the disruptions: make it longer"
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()


def test_across_kills_and_crashes_of_fs_blk_and_dk(tmp_path):
    # #5: FS, BLK and DK killed and FS and BLK crashed while the writer runs on C0 with a
    # reader on C2: every call answered (retried with the restarted servers), nothing lost
    # (the file on the image equals the shadow copy), e2fsck clean.
    count = operations(10000)
    hits = ["kill fs", "kill blk", "kill dk", "crash fs", "crash blk"]
    commands = (f"start {exerciser('/fx.dat', 501, count, '--reader 2')} @0; "
                f"{disruptions(hits, count, 500)}; wait")
    result, disk = boot(tmp_path, 3, "5", commands, 3 * count)
    assert result.rc == 0, result.describe()
    check_disrupted(result, hits, count)
    check_runs(result, disk, tmp_path, ["/fx.dat"], count)
    check_readers(result, [2])


def test_across_kills_and_crashes_of_instances(tmp_path):
    # Placement 9 on two cores: the writer on C1, the replica's core, so its changes go through
    # the replica to the owner, while the owner is killed and crashed again and again (each
    # restart must leave the program working: issue 39, item 3), the replica killed and
    # crashed, each BLK shard killed and DK killed; a reader on C0 through the owner.
    count = operations(10000)
    hits = ["kill fs", "kill fs.1", "crash fs", "kill blk", "kill blk.1", "kill fs", "kill dk",
            "crash fs.1", "crash fs"]
    commands = (f"start {exerciser('/fx.dat', 601, count, '--reader 0')} @1; "
                f"{disruptions(hits, count, 400)}; wait")
    result, disk = boot(tmp_path, 2, "9", commands, 3 * count)
    assert result.rc == 0, result.describe()
    check_disrupted(result, hits, count)
    assert "did not come back" not in result.text, result.describe()
    check_runs(result, disk, tmp_path, ["/fx.dat"], count)
    check_readers(result, [0])
