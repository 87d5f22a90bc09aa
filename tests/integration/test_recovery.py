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
BONNIE = {"procs": 2, "refs": 30000, "update_pct": 20, "seed": 11, "path": "/recover.dat"}
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
