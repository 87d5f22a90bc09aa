# FS as one owner and read replicas (docs/storage.md, "FS replicas"), placement fs 0,1 on two
# cores: a change made through one instance is seen at once through the other (replicatest,
# both ways), fstest passes through the replica, Bonnie with two processes on the two instances
# (readblock and readbyte) matches its host replay with e2fsck clean, and killing and crashing
# the owner and the replica while Bonnie runs loses nothing.
import shutil
import subprocess
import sys

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 900
REPLAY = formica.REPO_ROOT / "build" / "bench" / "bonnie_replay.py"
PLACEMENT = "fs 0,1\nblk 0\ndk 0\npager 0\napp 0,1\n"
BONNIE = {"procs": 2, "refs": 4000, "update_pct": 20, "seed": 7, "path": "/replicas.dat"}
READER_CASES_PER_ROUND = 16  # replicatest's reader: 5 checks after the create, 2, 3, 3 and 3
LONG_BONNIE = {"procs": 2, "refs": 80000, "update_pct": 20, "seed": 11, "path": "/recover.dat"}


def boot(tmp_path, commands, *extra):
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    placement = tmp_path / "replicas.conf"
    placement.write_text(PLACEMENT)
    result = formica.run("--smp", "2", "--accel", "tcg", "--placement", str(placement),
                         "--disk", str(disk), *extra, "--cmd", commands, timeout=TIMEOUT)
    return result, disk


def check_clean(disk):
    check = subprocess.run(["e2fsck", "-fn", str(disk)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def bonnie_command(verb, bonnie, mode="readblock"):
    return (f"{verb} bonnie -p {bonnie['procs']} -m {mode} -n {bonnie['refs']} "
            f"-u {bonnie['update_pct']} --seed {bonnie['seed']} -f {bonnie['path']}")


def check_replay(tmp_path, disk, bonnie):
    expected = tmp_path / "expected"
    subprocess.run([sys.executable, str(REPLAY), "-p", str(bonnie["procs"]), "-n",
                    str(bonnie["refs"]), "-u", str(bonnie["update_pct"]), "--seed",
                    str(bonnie["seed"]), "-o", str(expected)], check=True)
    actual = tmp_path / "actual"
    subprocess.run(["debugfs", "-R", f"dump {bonnie['path']} {actual}", str(disk)], check=True,
                   capture_output=True)
    assert actual.read_bytes() == expected.read_bytes(), "the file differs from the host replay"


def check_children(result, bonnie):
    children = result.kinds("bonnie_child")
    assert len(children) == bonnie["procs"], result.describe()
    assert sorted(child["core"] for child in children) == [0, 1], children
    assert all(child["mismatches"] == 0 and child["error"] == 0 for child in children), children


def instances_of_fs(result):
    return {line["index"]: line for line in result.kinds("server_instance")
            if line["server"] == "fs"}


def test_changes_are_seen_at_once_through_the_other_instance(tmp_path):
    # The writer on core 0 (the owner's) and the reader on core 1 (the replica's), then the
    # other way round: the replica forwards the writer's changes and the owner answers reads.
    result, disk = boot(tmp_path, "run replicatest 0 1 3 @0; run replicatest 1 0 3 @1; "
                                  "servers fs")
    assert result.rc == 0, result.describe()
    assert "operation log published" in result.text and "replica 1 of 2" in result.text
    summaries = result.kinds("replicatest_summary")
    assert len(summaries) == 2, result.describe()
    cases = result.kinds("replicatest")
    failed = [case for case in cases if not case["ok"]]
    assert not failed, failed
    readers = {case["core"] for case in cases if case["side"] == "reader"}
    assert readers == {0, 1}, readers
    assert len([case for case in cases if case["side"] == "reader"]) == 2 * 3 * READER_CASES_PER_ROUND
    instances = instances_of_fs(result)
    assert instances[0]["taken"] > 0 and instances[1]["taken"] > 0, instances
    check_clean(disk)


def test_fstest_through_the_replica(tmp_path):
    result, disk = boot(tmp_path, "run fstest @1; servers fs")
    assert result.rc == 0, result.describe()
    cases = result.kinds("fstest")
    assert cases and all(case["ok"] for case in cases), [c for c in cases if not c["ok"]]
    assert instances_of_fs(result)[1]["taken"] > 0
    check_clean(disk)


@pytest.mark.parametrize("mode", ["readblock", "readbyte"])
def test_bonnie_on_two_instances_matches_the_replay(tmp_path, mode):
    result, disk = boot(tmp_path, f"{bonnie_command('run', BONNIE, mode)}; servers fs")
    assert result.rc == 0, result.describe()
    check_children(result, BONNIE)
    instances = instances_of_fs(result)
    assert instances[0]["taken"] > 0 and instances[1]["taken"] > 0, instances
    check_clean(disk)
    check_replay(tmp_path, disk, BONNIE)


def test_owner_and_replica_killed_and_crashed_during_bonnie(tmp_path):
    hits = ["kill fs", "kill fs.1", "crash fs", "crash fs.1"]
    disruptions = "; ".join(f"sleep 600; {hit}" for hit in hits)
    result, disk = boot(tmp_path, f"{bonnie_command('start', LONG_BONNIE)}; {disruptions}; wait")
    assert result.rc == 0, result.describe()
    restarts = result.kinds("server_restart")
    assert [(line["server"], line["instance"]) for line in restarts] == \
        [("fs", 0), ("fs", 1), ("fs", 0), ("fs", 1)], result.describe()
    assert [line["core"] for line in restarts] == [0, 1, 0, 1]
    assert result.text.count("operation log published") == 3  # the first owner and two more
    bonnie_at = next(i for i, line in enumerate(result.jsons) if line["kind"] == "bonnie")
    last_restart_at = max(i for i, line in enumerate(result.jsons)
                          if line["kind"] == "server_restart")
    assert bonnie_at > last_restart_at, "Bonnie ended before the disruptions: make it longer"
    check_children(result, LONG_BONNIE)
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()
    check_clean(disk)
    check_replay(tmp_path, disk, LONG_BONNIE)


def test_replica_killed_in_its_receive_while_its_core_has_work(tmp_path):
    """The replica (on C1, where Bonnie's second process is ready to run) killed and crashed again
    and again while Bonnie runs, with its receive's wait window widened (ica_wait_delay): a kill
    served by the replica's own core while it is about to block must end the receive. The old
    receive looped in kernel mode instead (its wait returned at once for the kill, and only its
    poll, which a core with work to do skips, looked at the kill): C1 hung, nothing restarted."""
    hits = ["kill fs.1", "crash fs.1", "kill fs.1", "crash fs.1"]
    disruptions = "; ".join(f"sleep 400; {hit}" for hit in hits)
    result, disk = boot(tmp_path, f"{bonnie_command('start', LONG_BONNIE)}; {disruptions}; wait",
                        "--append", "ica_wait_delay=200000")
    assert result.rc == 0, result.describe()
    restarts = result.kinds("server_restart")
    assert [(line["server"], line["instance"], line["core"]) for line in restarts] == \
        [("fs", 1, 1)] * len(hits), result.describe()
    check_children(result, LONG_BONNIE)
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()
    check_clean(disk)
    check_replay(tmp_path, disk, LONG_BONNIE)


def test_program_on_the_replicas_core_outlives_owner_restarts(tmp_path):
    """fileloop on C1 (the replica's core: its writes, opens and unlinks go through the replica to
    the owner) while the owner is killed and crashed four times. A request the owner held when it
    ended comes back -E_SERVER_ENDED from the owner, not from the replica the library asked: the
    library must ask the replica again (it waits for the new owner), not wait for a new replica
    that never comes ("server 'fs' did not come back within 30000 ms", then the call failed)."""
    hits = ["kill fs", "crash fs", "kill fs", "crash fs"]
    disruptions = "; ".join(f"sleep 500; {hit}" for hit in hits)
    result, disk = boot(tmp_path, f"start fileloop 6000 @1; {disruptions}; wait")
    assert result.rc == 0, result.describe()
    restarts = result.kinds("server_restart")
    assert [(line["server"], line["instance"]) for line in restarts] == [("fs", 0)] * len(hits), \
        result.describe()
    loops = result.kinds("fileloop")
    assert len(loops) == 1 and loops[0]["failures"] == 0, loops
    loop_at = next(i for i, line in enumerate(result.jsons) if line["kind"] == "fileloop")
    last_restart_at = max(i for i, line in enumerate(result.jsons)
                          if line["kind"] == "server_restart")
    assert loop_at > last_restart_at, "fileloop ended before the disruptions: make it longer"
    assert "did not come back" not in result.text, result.describe()
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()
    check_clean(disk)
