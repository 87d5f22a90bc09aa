# test_linux_bonnie.py: the static Linux Bonnie of the evaluation's Linux comparison
# (build/linux/build.sh bonnie, docs/evaluation.md) builds from apps/bonnie and, run
# on this host, leaves the file the host replay predicts, as Formica's Bonnie does:
# both systems run the same algorithm and the same references.
import subprocess
import sys

import pytest

import formica

BUILD = formica.REPO_ROOT / "build" / "linux" / "build.sh"
REPLAY = formica.REPO_ROOT / "build" / "bench" / "bonnie_replay.py"


@pytest.fixture(scope="module")
def linux_bonnie(tmp_path_factory):
    program = tmp_path_factory.mktemp("linux") / "bonnie"
    subprocess.run([str(BUILD), "bonnie", str(program)], check=True, capture_output=True)
    return program


def results(output, kind):
    return [result for result in formica.parse_json_lines(output.splitlines()) if result["kind"] == kind]


@pytest.mark.parametrize("mode", ["readblock", "readbyte"])
def test_linux_bonnie_matches_replay(tmp_path, linux_bonnie, mode):
    data = tmp_path / "bonnie.dat"
    run = subprocess.run([str(linux_bonnie), "-p", "4", "-m", mode, "-n", "400", "--seed", "7",
                          "-f", str(data)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    summary = results(run.stdout, "bonnie")
    assert len(summary) == 1 and summary[0]["mode"] == mode and summary[0]["procs"] == 4
    children = results(run.stdout, "bonnie_child")
    assert len(children) == 4 and all(c["mismatches"] == 0 and c["error"] == 0 for c in children)
    expected = tmp_path / "expected"
    subprocess.run([sys.executable, str(REPLAY), "-p", "4", "-n", "400", "--seed", "7", "-o", str(expected)],
                   check=True)
    assert data.read_bytes() == expected.read_bytes()


def test_linux_bonnie_refuses_bad_options(linux_bonnie, tmp_path):
    run = subprocess.run([str(linux_bonnie), "-s", "12T", "-f", str(tmp_path / "x")], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode != 0
