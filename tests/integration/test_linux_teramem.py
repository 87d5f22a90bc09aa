# test_linux_teramem.py: apps/sort and apps/memseq built as static Linux programs
# (build/linux/build.sh teramem, shim build/linux/teramem_linux.c) run on this host and sort
# correctly; in the Linux guest (build/linux/init's swap= and run=) a sort whose cgroup
# memory.max is below its working set really swaps, to a file on the virtio disk, to zram
# and to an nbdkit export (docs/pager.md, "Against Linux swap"). The guest tests are skipped
# without the Linux guest (build/linux/build.sh).
import argparse
import shutil
import subprocess
import sys

import pytest

import formica

sys.path.insert(0, str(formica.REPO_ROOT / "build" / "bench"))
import pager_vs_linux  # noqa: E402

BUILD = formica.REPO_ROOT / "build" / "linux" / "build.sh"
LINUX_OUT = formica.REPO_ROOT / "build" / "out" / "linux"


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("linux-teramem")
    subprocess.run([str(BUILD), "teramem", str(directory)], check=True, capture_output=True)
    return directory


def results(output, kind):
    return [result for result in formica.parse_json_lines(output.splitlines()) if result["kind"] == kind]


def run(program, *arguments):
    return subprocess.run([str(program), *arguments], capture_output=True, text=True, timeout=120)


def test_linux_sort_verifies_on_the_host(programs):
    done = run(programs / "sort", "-n", "3000", "--seed", "5", "-b", "4K", "-l", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    sort = results(done.stdout, "sort")
    assert len(sort) == 1 and sort[0]["verified"] and sort[0]["records"] == 3000
    swap = results(done.stdout, "linux_swap")
    assert len(swap) == 1 and swap[0]["pswpin"] >= 0


def test_linux_external_sort_verifies_on_the_host(programs):
    # sort -S (apps/sort/external.c): one run, runs merged in one pass, and in three
    for buffer, runs in (("8M", 1), ("64K", 30), ("4K", 485)):
        done = run(programs / "sort", "-n", "20000", "--seed", "3", "-l", "0", "-S", buffer)
        assert done.returncode == 0, done.stdout + done.stderr
        sort = results(done.stdout, "sort")
        assert len(sort) == 1 and sort[0]["verified"] and sort[0]["records"] == 20000, sort
        assert sort[0]["runs"] == runs, sort


def test_linux_memseq_verifies_on_the_host(programs):
    done = run(programs / "memseq", "-s", "2M", "-l", "0", "-b", "4K")
    assert done.returncode == 0, done.stdout + done.stderr
    line = results(done.stdout, "memseq")
    assert len(line) == 1 and line[0]["verified"] and line[0]["mode"] == "sequential"
    assert "pswpin" in line[0] and "context_switches" in line[0]


def test_linux_sort_refuses_bad_options(programs):
    done = run(programs / "sort", "-n", "10", "-P", "random")
    assert done.returncode == 2 and "bad value 'random' for -P" in done.stdout


def test_linux_limit_outside_a_cgroup_of_its_own_is_reported(programs):
    """-l where sort is not alone in its cgroup (here it shares pytest's): the limit is not
    set on a cgroup other processes are in, and the program says so."""
    done = run(programs / "sort", "-n", "500", "-b", "4K", "-l", "64K")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the 65536-byte limit is not enforced" in done.stdout
    assert results(done.stdout, "linux_swap")[0]["base_bytes"] == 0


@pytest.mark.skipif(not (LINUX_OUT / "vmlinuz").is_file(), reason="no Linux guest: run build/linux/build.sh")
@pytest.mark.parametrize("swap", ["disk", "zram", "nbd"])
def test_linux_guest_sort_really_swaps(swap, tmp_path):
    if swap == "nbd" and shutil.which("nbdkit") is None:
        pytest.skip("nbdkit is not installed")
    options = argparse.Namespace(records=5000, seed=3)
    limit = 229376  # of a working set of about 480 KiB (much less, and the cgroup OOM-kills sort)
    rows, error = pager_vs_linux.linux_boot(swap, [limit], options, "tcg", False, tmp_path / "linux.log", 900)
    assert error is None, (tmp_path / "linux.log").read_text()[-3000:]
    sort = rows[limit]
    assert sort["verified"] and sort["records"] == 5000
    assert sort["pswpin"] > 0 and sort["pswpout"] > 0
    assert int(sort["memory_max"]) == sort["base_bytes"] + limit
