# Scheduling and placement at boot: time slices share a core between busy processes, kill
# ends a process on another core, and a bad placement file is rejected with its line number
# while Formica falls back to the safe default placement and keeps going.
import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 90


def processes(result):
    return {entry["pid"]: entry for entry in result.kinds("process")}


def test_busy_processes_share_a_core_by_time_slices():
    result = formica.run("--smp", "2", "--accel", "tcg", "--cmd",
                         "start spin @1; start spin @1; run hello @1; run spin 300 @1",
                         timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    assert result.kinds("hello") and result.kinds("hello")[0]["core"] == 1, result.describe()
    assert result.kinds("spin")[0]["loops"] > 0, result.describe()


def test_kill_ends_a_process_on_another_core():
    result = formica.run("--smp", "2", "--accel", "tcg", "--cmd",
                         "start spin @1; sleep 100; ps; kill 8; sleep 300; ps; kill 8",
                         timeout=TIMEOUT)
    started = result.kinds("started")
    assert started and started[0]["pid"] == 8, result.describe()  # after init, 5 servers, shell
    listings = [line for line in result.lines if line.startswith("formica> ps")]
    assert len(listings) == 2, result.describe()
    states = [entry["state"] for entry in result.kinds("process") if entry["pid"] == 8]
    assert states == ["running", "zombie"] or states == ["ready", "zombie"], result.describe()
    # killing a process that has already ended fails: the last command makes the run fail
    assert "kill: pid 8" in result.text and result.rc == 1, result.describe()


def test_init_cannot_be_killed():
    result = formica.run("--smp", "1", "--accel", "tcg", "--cmd", "kill 1; run hello",
                         timeout=TIMEOUT)
    assert "kill: pid 1" in result.text, result.describe()
    assert result.kinds("hello"), result.describe()
    assert result.rc == 1, result.describe()


def test_bad_placement_file_falls_back_with_line_numbers(tmp_path):
    placement = tmp_path / "bad.conf"
    placement.write_text("# a broken placement\nfs 1\nblk 9\nfrob 2\n")
    result = formica.run("--smp", "4", "--accel", "tcg", "--placement", str(placement),
                         "--cmd", "placement; run hello", timeout=TIMEOUT)
    assert result.rc == 0, result.describe()
    assert "line 3" in result.text and "line 4" in result.text, result.describe()
    assert "safe default" in result.text, result.describe()
    info = result.kinds("placement")[0]
    assert (info["fs"], info["blk"], info["dk"]) == (0, 0, 0), result.describe()
    assert info["warnings"] == 2, result.describe()
    assert result.kinds("hello"), result.describe()


def test_missing_placement_preset_falls_back():
    result = formica.run("--smp", "2", "--accel", "tcg", "--placement", "5", "--cmd", "placement",
                         timeout=TIMEOUT)
    # preset 5 needs three cores: core 2 does not exist on a 2-core machine
    assert result.rc == 0, result.describe()
    assert "safe default" in result.text, result.describe()
    assert result.kinds("placement")[0]["warnings"] >= 1, result.describe()
