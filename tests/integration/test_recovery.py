# Recovery (docs/recovery.md): FS, BLK and DK killed and FS crashed while Bonnie runs
# (2 processes, 20 % updates, readblock): init restarts each on its core under its name,
# Bonnie's requests are retried with the new servers, the new BLK replays the writes the
# old one acknowledged from its kept journal, Bonnie exits 0 with no mismatch, the
# file equals the host replay of an undisturbed run with the same seed, and e2fsck -fn is
# clean. And an ordinary program may neither crash a server nor become an administrator.
import shutil
import subprocess
import sys

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 600
REPLAY = formica.REPO_ROOT / "build" / "bench" / "bonnie_replay.py"
BONNIE = {"procs": 2, "refs": 80000, "update_pct": 20, "seed": 11, "path": "/recover.dat"}
# What the shell does to the servers while Bonnie runs, in order.
DISRUPTIONS = [("kill", "fs"), ("kill", "blk"), ("kill", "dk"), ("crash", "fs")]
PAUSE_MS = 600  # between disruptions: each server is back before the next is hit


def bonnie_command():
    return (f"start bonnie -p {BONNIE['procs']} -m readblock -n {BONNIE['refs']} "
            f"-u {BONNIE['update_pct']} --seed {BONNIE['seed']} -f {BONNIE['path']}")


def disruption_commands():
    return "; ".join(f"sleep {PAUSE_MS}; {verb} {server}" for verb, server in DISRUPTIONS)


def replay(output):
    subprocess.run([sys.executable, str(REPLAY), "-p", str(BONNIE["procs"]), "-n",
                    str(BONNIE["refs"]), "-u", str(BONNIE["update_pct"]), "--seed",
                    str(BONNIE["seed"]), "-o", str(output)], check=True)
    return output.read_bytes()


def dump(image, output):
    subprocess.run(["debugfs", "-R", f"dump {BONNIE['path']} {output}", str(image)], check=True,
                   capture_output=True)
    return output.read_bytes()


def test_bonnie_survives_server_kills_and_crash(tmp_path):
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    commands = f"{bonnie_command()}; {disruption_commands()}; wait; ps"
    result = formica.run("--smp", "3", "--accel", "tcg", "--placement", "5", "--disk", str(disk),
                         "--cmd", commands, timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    restarts = result.kinds("server_restart")
    assert [line["server"] for line in restarts] == ["fs", "blk", "dk", "fs"], result.describe()
    assert restarts[3]["exit_code"] == 128 + 14, "the crash is a page fault"
    assert all(line["exit_code"] == -1 for line in restarts[:3]), "the kills"
    assert [line["restarts"] for line in restarts] == [1, 1, 1, 2]
    for line in restarts:  # the same core as the placement gives it
        assert line["core"] == {"fs": 1, "blk": 2, "dk": 0}[line["server"]], line
    # Every disruption hit Bonnie while it ran: its result came after the last restart.
    bonnie_at = next(i for i, line in enumerate(result.jsons) if line["kind"] == "bonnie")
    last_restart_at = max(i for i, line in enumerate(result.jsons)
                          if line["kind"] == "server_restart")
    assert bonnie_at > last_restart_at, "Bonnie ended before the disruptions: make it longer"
    # The killed BLK had acknowledged writes still only in its cache: the new one replayed them
    # from the kept journal (without it they would be lost and the file would differ).
    replays = result.kinds("blk_replay")
    assert len(replays) == 1 and replays[0]["blocks"] > 0, replays
    children = result.kinds("bonnie_child")
    assert len(children) == BONNIE["procs"]
    assert all(child["mismatches"] == 0 and child["error"] == 0 for child in children), children
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()
    # ps: the restarted servers and their counts.
    shown = {line["name"]: line["restarts"] for line in result.kinds("process")
             if line["state"] != "zombie"}
    assert shown["fs"] == 2 and shown["blk"] == 1 and shown["dk"] == 1 and shown["pager"] == 0
    check = subprocess.run(["e2fsck", "-fn", str(disk)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    expected = replay(tmp_path / "expected")
    actual = dump(disk, tmp_path / "actual")
    assert len(actual) == len(expected)
    differing = [offset for offset in range(len(expected)) if actual[offset] != expected[offset]]
    assert not differing, f"{len(differing)} bytes differ, first at {differing[:4]}"


def test_ordinary_program_cannot_crash_or_become_administrator():
    commands = "run fault crash fs; run fault administrator; ps"
    result = formica.run("--smp", "2", "--accel", "tcg", "--cmd", commands, timeout=120)
    assert result.rc == 0, result.describe()
    cases = {line["case"]: line["result"] for line in result.kinds("fault")}
    assert cases == {"crash": -8, "administrator": -8}, result.describe()
    assert not result.kinds("server_restart"), "no server was hit"


def check_clean(disk):
    check = subprocess.run(["e2fsck", "-fn", str(disk)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def expected_bonnie_file(tmp_path, disk):
    expected = replay(tmp_path / "expected")
    actual = dump(disk, tmp_path / "actual")
    assert len(actual) == len(expected)
    differing = [offset for offset in range(len(expected)) if actual[offset] != expected[offset]]
    assert not differing, f"{len(differing)} bytes differ, first at {differing[:4]}"


def test_back_to_back_restarts(tmp_path):
    # The shell's kill waits for the server to be back, so each kill hits the new FS
    # (or BLK) at once, before it has served much: restarts of a restarted server.
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    hits = "kill fs; kill fs; crash fs; kill fs; kill blk; kill blk"
    commands = f"{bonnie_command()}; sleep {PAUSE_MS}; {hits}; wait"
    result = formica.run("--smp", "3", "--accel", "tcg", "--placement", "5", "--disk", str(disk),
                         "--cmd", commands, timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    restarts = result.kinds("server_restart")  # init restarts FS and BLK in either order
    counts = {server: [line["restarts"] for line in restarts if line["server"] == server]
              for server in ("fs", "blk")}
    assert counts == {"fs": [1, 2, 3, 4], "blk": [1, 2]}, result.describe()
    children = result.kinds("bonnie_child")
    assert all(child["mismatches"] == 0 and child["error"] == 0 for child in children), children
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()
    check_clean(disk)
    expected_bonnie_file(tmp_path, disk)


def test_request_that_kills_its_server_is_bounded(tmp_path):
    # fs_end_on_stat=1: every FS ends before answering an FS_STAT, a request that kills
    # its server each time it is sent. The library sends it 1 + REQUEST_RETRIES (8) times,
    # then gives up with -E_SERVER_ENDED: nine restarts, not an endless loop and not
    # init's limit; the FS left serves the next request (cat: open and read, no stat).
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    result = formica.run("--smp", "2", "--accel", "tcg", "--disk", str(disk), "--append",
                         "fs_end_on_stat=1", "--cmd", "stat /hello.txt; cat /hello.txt",
                         timeout=TIMEOUT)
    assert result.text.count("fs: ending before answering FS_STAT") == 9, result.describe()
    restarts = [line["restarts"] for line in result.kinds("server_restart")
                if line["server"] == "fs"]
    assert restarts == list(range(1, 10)), result.describe()
    assert "stat: /hello.txt: server ended before answering" in result.text, result.describe()
    assert "Hello from Formica's disk." in result.text, result.describe()
    assert "init: shell exited with code 1" in result.text, result.describe()  # the stat
    check_clean(disk)


def churn_byte(seed, offset):
    return (seed * 31 + offset * 7 + offset // 251) & 0xFF


def test_directory_changes_during_restarts(tmp_path):
    # churn creates, renames and removes files and directories while FS is killed and
    # crashed and BLK killed: every request is answered once (no -E_SERVER_ENDED, no
    # second mkdir failing for the first one's success), every fsynced file reads back,
    # and the file system is whole.
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    hits = "; ".join(f"sleep 300; {verb} {server}" for verb, server in
                     [("kill", "fs"), ("crash", "fs"), ("kill", "blk"), ("kill", "fs")])
    commands = f"start churn 6000; {hits}; wait"
    result = formica.run("--smp", "3", "--accel", "tcg", "--placement", "5", "--disk", str(disk),
                         "--cmd", commands, timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    assert not result.kinds("churn_error"), result.describe()
    assert [line["server"] for line in result.kinds("server_restart")] == ["fs", "fs", "blk",
                                                                            "fs"]
    done_at = next(i for i, line in enumerate(result.jsons) if line["kind"] == "churn_done")
    last_restart_at = max(i for i, line in enumerate(result.jsons)
                          if line["kind"] == "server_restart")
    assert done_at > last_restart_at, "churn ended before the restarts: make it longer"
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()
    check_clean(disk)
    for kept in result.kinds("churn_fsynced")[-5:]:
        path = tmp_path / "kept"
        subprocess.run(["debugfs", "-R", f"dump {kept['path']} {path}", str(disk)], check=True,
                       capture_output=True)
        data = path.read_bytes()
        assert len(data) == kept["bytes"], kept
        assert data == bytes(churn_byte(kept["seed"], i) for i in range(kept["bytes"])), kept


@pytest.mark.parametrize("image", ["disk.img", "disk-1k.img"])  # ext3, and ext2 (no journal)
@pytest.mark.parametrize("command,listed", [("mkdir /once", True), ("rm /hello.txt", False)])
def test_changing_request_done_once(tmp_path, command, listed, image):
    # fs_end_after=1 ends FS after its first request's work, before the answer: the
    # shell's mkdir (or rm) comes back with -E_SERVER_ENDED, is sent again marked
    # FS_TAG_RESENT, and the new FS gives the answer the first one kept: success, not
    # -E_EXISTS (or -E_NOT_FOUND) for the first try's effect. The kept answer does not
    # depend on ext3's journal: on ext2 too.
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / image, disk)
    name = command.split()[1].lstrip("/")
    result = formica.run("--smp", "2", "--accel", "tcg", "--disk", str(disk), "--append",
                         "fs_end_after=1", "--cmd", f"{command}; ls /", timeout=120)
    assert result.rc == 0, result.describe()
    assert "fs: ending after 1 requests" in result.text, result.describe()
    assert "its kept answer given" in result.text, result.describe()
    assert [line["server"] for line in result.kinds("server_restart")] == ["fs"]
    listing = result.text.split("formica> ls /", 1)[1]
    assert (f" {name}\n" in listing) == listed, listing
    check_clean(disk)


def test_sync_right_after_a_dk_restart(tmp_path):
    # A sync whose BLK has written nothing since DK was killed: BLK's first request to DK is
    # the flush, to the old DK's pid. It goes to the restarted DK as BLK's reads and writes
    # do; without the retry it failed ("blk: sync failed: not found"), and so did the shell's
    # sync and init's before power-off.
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    result = formica.run("--smp", "1", "--accel", "tcg", "--placement", "1", "--disk", str(disk),
                         "--cmd", "sync; kill dk; sync; sync", timeout=120)
    assert result.rc == 0, result.describe()
    assert [line["server"] for line in result.kinds("server_restart")] == ["dk"]
    assert "sync failed" not in result.text, result.describe()
    check_clean(disk)
