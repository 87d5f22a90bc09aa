# Bonnie (apps/bonnie) under placements #1, #5 and #7 with readblock and readbyte and
# 1, 4 and 16 processes; and, after runs with updates, e2fsck -fn on the image and the
# file's bytes against the host replay (build/bench/bonnie_replay.py), on virtio-blk, AHCI and NVMe.
import shutil
import subprocess
import sys

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 900
REPLAY = formica.REPO_ROOT / "build" / "bench" / "bonnie_replay.py"
DISK_IMAGE = formica.OUT_DIR / "disk.img"
MODES = ["readblock", "readbyte"]
PROCESS_COUNTS = [1, 4, 16]
# Placement preset -> cores it needs (#1/#5: up to C2; #7: FS C1, BLK C2, apps elsewhere too).
PLACEMENT_CORES = {"1": 3, "5": 3, "7": 4}
# The update runs: (mode, path, seed), 4 processes, 50 % updates, 600 references each.
UPDATE_RUNS = [("readblock", "/rb.dat", 7), ("readbyte", "/rby.dat", 9)]
UPDATE_ARGS = {"procs": 4, "refs": 600, "update_pct": 50}


def boot(commands, cores, placement, disk, *flags):
    return formica.run("--smp", str(cores), "--accel", "tcg", "--placement", placement,
                       "--disk", str(disk), *flags, "--cmd", commands, timeout=TIMEOUT)


def disk_copy(tmp_path):
    copy = tmp_path / "disk.img"
    shutil.copyfile(DISK_IMAGE, copy)
    return copy


def check_bonnie_line(line, mode, procs, placement):
    assert line["mode"] == mode and line["procs"] == procs
    assert line["file_bytes"] == 128 * 1024 and line["refs"] == 4000 and line["update_pct"] == 10
    assert line["placement"] == placement
    assert isinstance(line["elapsed_us"], int) and line["elapsed_us"] > 0
    servers = line["server_cycles"]  # what FS, BLK and DK ran during the timed part
    assert servers["fs"] > 0 and servers["blk"] > 0 and servers["dk"] >= 0, line
    assert servers["fs"] + servers["blk"] <= line["cycles"] * 4, line  # at most the 3-4 cores' time


@pytest.mark.parametrize("placement", sorted(PLACEMENT_CORES))
def test_bonnie_completes(tmp_path, placement):
    runs = [(mode, procs) for mode in MODES for procs in PROCESS_COUNTS]
    commands = "; ".join(f"run bonnie -p {procs} -m {mode}" for mode, procs in runs)
    result = boot(commands, PLACEMENT_CORES[placement], placement, disk_copy(tmp_path))
    assert result.rc == 0, result.describe()
    lines = result.kinds("bonnie")
    assert len(lines) == len(runs), result.describe()
    for line, (mode, procs) in zip(lines, runs):
        check_bonnie_line(line, mode, procs, placement)
    children = result.kinds("bonnie_child")
    assert len(children) == sum(procs for _, procs in runs)
    assert all(child["mismatches"] == 0 and child["error"] == 0 for child in children)


def replay(seed, output):
    subprocess.run([sys.executable, str(REPLAY), "-p", str(UPDATE_ARGS["procs"]),
                    "-n", str(UPDATE_ARGS["refs"]), "-u", str(UPDATE_ARGS["update_pct"]),
                    "--seed", str(seed), "-o", str(output)], check=True)
    return output.read_bytes()


def dump(image, guest_path, output):
    subprocess.run(["debugfs", "-R", f"dump {guest_path} {output}", str(image)], check=True,
                   capture_output=True)
    return output.read_bytes()


@pytest.mark.parametrize("bus", ["virtio", "ahci", "nvme"])
def test_updates_match_replay(tmp_path, bus):
    disk = disk_copy(tmp_path)
    commands = "; ".join(
        f"run bonnie -p {UPDATE_ARGS['procs']} -m {mode} -n {UPDATE_ARGS['refs']} "
        f"-u {UPDATE_ARGS['update_pct']} --seed {seed} -f {path}" for mode, path, seed in UPDATE_RUNS)
    result = boot(commands, 3, "5", disk, "--disk-bus", bus)
    assert result.rc == 0, result.describe()
    assert len(result.kinds("bonnie")) == len(UPDATE_RUNS), result.describe()
    check = subprocess.run(["e2fsck", "-fn", str(disk)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    for mode, path, seed in UPDATE_RUNS:
        expected = replay(seed, tmp_path / f"expected-{seed}")
        actual = dump(disk, path, tmp_path / f"actual-{seed}")
        assert len(actual) == len(expected), mode
        differing = [offset for offset in range(len(expected)) if actual[offset] != expected[offset]]
        assert not differing, f"{mode}: {len(differing)} bytes differ, first at {differing[:4]}"
