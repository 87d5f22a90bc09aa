# The pager's block tables survive its restart (servers/pager/kept_tables.c): sort with the
# disk or NVM backend at a quarter of its working set while the shell kills or crashes the pager;
# the restarted pager adopts sort, its faults go to the new pager, and sort's result is verified.
# memseq does the same on an NBD export and on memory nodes (one, two with two replicas, and a
# node gone when the new pager negotiates again).
import os
import re
import shutil
import signal

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 400
SORT = "sort -n 10000 -l 256K -b 16K -P lru"


def run_sort_with(tmp_path, hits, backend="disk"):
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    # `stat /` waits for FS to mount, so the sleep starts with sort swapping (the pager
    # keeps its swap file on FS) whatever the load on the host.
    commands = f"stat /; start {SORT} --backend {backend}; sleep 1000; {hits}; wait"
    nvm = ["--nvm", f"{tmp_path / 'pager.nvm'}:64M"] if backend == "nvm" else []
    return formica.run("--smp", "2", "--accel", "tcg", "--disk", str(disk), *nvm, "--cmd",
                       commands, timeout=TIMEOUT)


@pytest.mark.parametrize("backend,hits,exit_codes", [
    ("disk", "kill pager", [-1]),
    ("disk", "crash pager", [128 + 14]),
    ("disk", "kill pager; crash pager", [-1, 128 + 14]),
    ("nvm", "kill pager", [-1]),
    ("nvm", "kill pager; crash pager", [-1, 128 + 14]),
])
def test_sort_survives_pager_restarts(tmp_path, backend, hits, exit_codes):
    result = run_sort_with(tmp_path, hits, backend)
    assert result.rc == 0, result.describe()
    restarts = result.kinds("server_restart")
    assert [line["server"] for line in restarts] == ["pager"] * len(exit_codes), result.describe()
    assert [line["exit_code"] for line in restarts] == exit_codes
    assert [line["restarts"] for line in restarts] == list(range(1, len(exit_codes) + 1))
    # The restarted pager took sort back from the kept tables at sort's next fault (a pager
    # ended before that fault leaves the tables to the next one, still kept).
    adopted = result.kinds("pager_adopt")
    assert 1 <= len(adopted) <= len(exit_codes), result.describe()
    sort_pid = result.kinds("started")[0]["pid"]
    assert all(line["pid"] == sort_pid for line in adopted)
    # The restarts hit sort while it ran: its result came after the last one.
    sort_at = next(i for i, line in enumerate(result.jsons) if line["kind"] == "sort")
    last_adopt_at = max(i for i, line in enumerate(result.jsons) if line["kind"] == "pager_adopt")
    assert sort_at > last_adopt_at, "sort ended before the restarts: make it longer"
    sorts = result.kinds("sort")
    assert len(sorts) == 1 and sorts[0]["verified"] is True, result.describe()
    assert sorts[0]["swap_in_blocks"] > 0 and sorts[0]["swap_out_blocks"] > 0
    assert "could not serve" not in result.text, result.describe()
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()


def assert_memseq_survived_one_kill(result, failure_text):
    """One pager restart, the program taken back before memseq ended, memseq verified and
    exit 0, and no `failure_text` on the console."""
    assert result.rc == 0, result.describe()
    assert [line["server"] for line in result.kinds("server_restart")] == ["pager"]
    assert len(result.kinds("pager_adopt")) == 1, result.describe()
    runs = result.kinds("memseq")
    assert len(runs) == 1 and runs[0]["verified"] is True, result.describe()
    memseq_at = next(i for i, line in enumerate(result.jsons) if line["kind"] == "memseq")
    adopt_at = next(i for i, line in enumerate(result.jsons) if line["kind"] == "pager_adopt")
    assert memseq_at > adopt_at, "memseq ended before the kill: make it longer"
    assert failure_text not in result.text, result.describe()
    assert [line["exit_code"] for line in result.kinds("waited")] == [0], result.describe()


@pytest.mark.parametrize("block,limit", [("16K", "256K"), ("1M", "8M")])
def test_memseq_survives_a_pager_kill_while_it_writes(tmp_path, block, limit):
    # memseq writes 24 MiB through a limit of 16 blocks (every block is stored to the swap
    # file) and then reads it back and checks it: the kill lands among those stores. A store
    # in flight is kept whole in the pager's kept region, a 1 MiB block in all 16 slots.
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    # The region's swap file is written whole before PAGER_INIT is answered (docs/pager.md):
    # the kill waits for it (hostile await), so that it lands among the stores.
    commands = (f"start memseq -s 24M -l {limit} -b {block} --backend disk; "
                f"run hostile await /swap {24 << 20}; sleep 200; kill pager; wait")
    result = formica.run("--smp", "2", "--accel", "tcg", "--disk", str(disk), "--cmd", commands,
                         timeout=TIMEOUT)
    assert_memseq_survived_one_kill(result, "could not serve")


def test_keyed_nvm_memseq_survives_a_pager_kill(tmp_path):
    # A persistent key: the key's map in the NVM already names the stored blocks, the kept
    # tables name the same units; the restarted pager takes both back without a clash.
    commands = ("start memseq -s 24M -l 256K -b 16K --backend nvm --key 9; sleep 200; "
                "kill pager; wait")
    result = formica.run("--smp", "2", "--accel", "tcg", "--nvm",
                         f"{tmp_path / 'pager.nvm'}:64M", "--cmd", commands, timeout=TIMEOUT)
    assert_memseq_survived_one_kill(result, "cannot be taken back")


def swapped_out_before_the_kill(result):
    """The pagerstat printed just before the kill: blocks were out on the backend."""
    stats = [line for line in result.kinds("pagerstat")]
    assert stats and stats[0]["swap_out_blocks"] > 0, "no block out when the pager was killed"
    stat_at = next(i for i, line in enumerate(result.jsons) if line["kind"] == "pagerstat")
    restart_at = next(i for i, line in enumerate(result.jsons)
                      if line["kind"] == "server_restart")
    assert stat_at < restart_at


def test_nbd_memseq_survives_a_pager_kill(tmp_path):
    # The NBD export lives on the host for the whole run: the restarted pager opens the
    # device again as it is and takes the placed blocks back.
    if shutil.which("nbdkit") is None:
        pytest.skip("nbdkit is missing: run build/deps.sh")
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    commands = ("start memseq -s 24M -l 256K -b 16K --backend block; sleep 200; pagerstat; "
                "kill pager; wait")
    result = formica.run("--smp", "2", "--accel", "tcg", "--disk", str(disk), "--nbd", "32M",
                         "--cmd", commands, timeout=TIMEOUT)
    assert_memseq_survived_one_kill(result, "could not serve")
    swapped_out_before_the_kill(result)
    assert "pager: restart: pid" in result.text and "(1536 blocks, block)" in result.text


# memseq writes 48 MiB through a 256 KiB limit to the memory nodes, pauses 5 s and reads it
# back: the pager negotiates for about 3.5 s, then stores 700 (loaded host) to 3,000 (quiet,
# fast host) blocks a second, so the kill at 4.5 s lands while memseq writes or pauses, with
# blocks out on the nodes (pagerstat says so) and memseq not done, on slow and fast hosts.
NODE_MEMSEQ = "start memseq -s 48M -l 256K -b 16K --backend node --pause 5000"
NODE_FLAGS = ("--smp", "2", "--accel", "tcg", "--memnode-mem", "128M", "--memnode-capacity", "64M")


def blocks_on_nodes_at_the_kill(result, nodes):
    """The pagernode lines printed before the kill: every node held stored blocks."""
    swapped_out_before_the_kill(result)
    before = result.kinds("pagernode")[:nodes]
    assert len(before) == nodes and all(line["stores"] > 0 for line in before), result.describe()


@pytest.mark.parametrize("nodes,replicas", [(1, 1), (2, 2)])
def test_memseq_on_memory_nodes_survives_a_pager_kill(nodes, replicas):
    commands = f"{NODE_MEMSEQ} --replicas {replicas}; sleep 4500; pagerstat; kill pager; wait"
    result = formica.run(*NODE_FLAGS, "--memnodes", str(nodes), "--cmd", commands,
                         timeout=TIMEOUT)
    assert_memseq_survived_one_kill(result, "cannot be had")
    blocks_on_nodes_at_the_kill(result, nodes)
    assert f"pager: {nodes} memory node(s)" in result.text
    assert "(3072 blocks, node)" in result.text, result.describe()
    assert result.kinds("memseq")[0]["swap_in_blocks"] == 3072
    assert not result.kinds("memnode_dead"), result.describe()


def test_pager_restart_after_the_first_memory_node_died(tmp_path):
    # Node 1's QEMU is killed while memseq writes two replicas (or pauses after writing them,
    # on a fast host): the pager waits for it, calls it dead (20 s of silence) and goes on
    # with the copies on node 2. Then the pager is killed: the new pager finds node 2 only, now the first node of its negotiation, and
    # takes the copies back by node id; every block is read from node 2.
    commands = (f"{NODE_MEMSEQ} --replicas 2; sleep 15000; pagerstat; kill pager; wait")
    run = formica.start(tmp_path, *NODE_FLAGS, "--memnodes", "2", "--cmd", commands,
                        timeout=TIMEOUT)
    writing = run.wait_for(lambda out, err: re.search(
        r'"bytes written","done":[1-9]|"kind":"memseq_pause"', out), 120)
    match = re.search(r"memory node 1: pid (\d+)", run.stderr())
    assert writing and match, run.stdout()[-3000:] + run.stderr()
    assert '"kind":"server_restart"' not in run.stdout(), "the pager was killed before node 1"
    os.kill(int(match.group(1)), signal.SIGKILL)
    result = run.finish()
    assert_memseq_survived_one_kill(result, "cannot be had")
    [dead] = result.kinds("memnode_dead")
    assert dead["node"] == 1 and dead["copies_lost"] > 0 and dead["blocks_without_copy"] == 0
    killed_at = result.text.index("kill: pager")
    assert "pager: 1 memory node(s)" in result.text[killed_at:], result.describe()
    assert "(3072 blocks, node)" in result.text, result.describe()
