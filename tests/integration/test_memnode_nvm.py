# Persistent memory nodes (docs/memnode.md, "Persistent nodes"): `build/run --memnode-nvm SIZE`
# gives each node its own NVDIMM file; a sort whose only node restarts mid-run completes and
# verifies with no replica; a DRAM node that restarts is detected (its copies dropped, the
# replica used, never wrong data); blocks scribbled on in a node's NVM are answered corrupt and
# read from the replica; a foreign or corrupted node NVM is refused with a message, and the
# clients are told.
import re

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 600
NODE_FLAGS = ("--smp", "2", "--accel", "tcg", "--memnode-mem", "64M", "--memnode-capacity", "8M")
NVM_FLAGS = ("--memnode-nvm", "16M")
SORT = "run sort -n 20000 -l 256K -b 16K --backend node"
SORTING = '"phase":"records merged"'
REFUSED_BY_CLIENT = "refused the negotiation (status 3): its NVM is not served"


def node_log(log):
    return (log.parent / f"{log.name}.node-1.log").read_text(errors="replace")


def start_sort(tmp_path, *flags, sort=SORT, nodes=1):
    log = tmp_path / "run.log"
    run = formica.start(tmp_path, *NODE_FLAGS, "--memnodes", str(nodes), *flags, "--log",
                        str(log), "--cmd", f"{sort}; pagerstat", timeout=TIMEOUT)
    return run, log


def restart_node_while_sorting(run, log, index=1):
    """Once the sort swaps to the node, ask build/run to crash and reboot node `index`."""
    swapping = run.wait_for(lambda out, err: SORTING in out, 300)
    assert swapping, run.stdout()[-3000:] + run.stderr()
    (log.parent / f"{log.name}.node-{index}.restart").touch()
    assert run.wait_for(lambda out, err: f"memory node {index} restarted" in err, 60), \
        run.stderr()


def check_verified(result, replicas=1):
    [sort] = result.kinds("sort")
    assert result.rc == 0 and sort["verified"] is True, result.describe()
    assert sort["replicas"] == replicas and sort["swap_in_blocks"] > 0, result.describe()
    assert "killed by page fault" not in result.text and "PANIC" not in result.text


def test_sort_survives_its_only_nvm_node_restarting(tmp_path):
    run, log = start_sort(tmp_path, *NVM_FLAGS)
    restart_node_while_sorting(run, log)
    result = run.finish()
    check_verified(result)
    [restart] = result.kinds("memnode_restart")
    assert restart == {"kind": "memnode_restart", "node": 1, "generation": 2,
                       "previous_generation": 1, "kept": True}, result.describe()
    assert not result.kinds("memnode_dead"), result.describe()
    [nodes] = result.kinds("pagernodes")
    assert nodes["blocks_lost"] == 0 and nodes["copies_lost"] == 0, result.describe()
    text = node_log(log)
    assert "memnode: NVM at 0x" in text and "formatted: generation 1" in text, text
    kept = re.search(r"store found: generation 2, (\d+) blocks kept", text)
    assert kept and int(kept.group(1)) > 0, text


def test_a_restarted_dram_node_is_dropped_and_the_replica_serves(tmp_path):
    run, log = start_sort(tmp_path, sort=f"{SORT} --replicas 2", nodes=2)
    restart_node_while_sorting(run, log)
    result = run.finish()
    check_verified(result, replicas=2)
    [lost] = result.kinds("memnode_dead")
    assert lost["node"] == 1 and lost["restarted_empty"] is True, result.describe()
    assert lost["copies_lost"] > 0 and lost["blocks_without_copy"] == 0, result.describe()
    assert "memory node 1 (52:54:00:4d:4e:01) is not used any more: it restarted empty " \
           "(its blocks were in DRAM)" in result.text, result.describe()
    assert not result.kinds("memnode_restart")


def test_a_restarted_dram_node_without_replica_fails_the_fault_never_wrong_data(tmp_path):
    run, log = start_sort(tmp_path)
    restart_node_while_sorting(run, log)
    result = run.finish()
    [lost] = result.kinds("memnode_dead")
    assert lost["restarted_empty"] is True and lost["blocks_without_copy"] > 0, result.describe()
    assert result.kinds("pager_block_lost"), result.describe()
    assert not [sort for sort in result.kinds("sort") if sort["verified"]], result.describe()


def boot_memclient(log, *flags):
    return formica.run(*NODE_FLAGS, "--memnodes", "1", *NVM_FLAGS, *flags, "--log", str(log),
                       "--cmd", "run --driver memclient 1 16 4", timeout=TIMEOUT)


def test_nvm_of_another_cluster_is_refused_and_the_client_told(tmp_path):
    log = tmp_path / "run.log"
    first = boot_memclient(log, "--memnode-cluster", "a1" * 16)
    assert first.rc == 0 and first.kinds("memclient")[0]["verified"], first.describe()
    again = boot_memclient(log, "--memnode-cluster", "a1" * 16)
    assert again.rc == 0, again.describe()
    assert "store found: generation 2" in node_log(log)
    other = boot_memclient(log, "--memnode-cluster", "d4" * 16)
    assert other.rc == 1, other.describe()
    assert (f"memnode: NVM belongs to cluster {'a1' * 16} node 1, not cluster {'d4' * 16} "
            "node 1: not served") in node_log(log)
    assert REFUSED_BY_CLIENT in other.text, other.describe()
    [memclient] = other.kinds("memclient")
    assert memclient["ok"] is False and memclient["stage"] == "negotiate", other.describe()


def test_corrupted_node_nvm_is_refused_and_the_pager_told(tmp_path):
    log = tmp_path / "run.log"
    cluster = ("--memnode-cluster", "c3" * 16)
    first = boot_memclient(log, *cluster)
    assert first.rc == 0, first.describe()
    nvm = log.parent / f"{log.name}.node-1.nvm"
    with open(nvm, "r+b") as device:  # scribble on both header slots' geometry
        for slot in (0, 128):
            device.seek(slot + 96)
            device.write(b"\xff" * 8)
    result = formica.run(*NODE_FLAGS, "--memnodes", "1", *NVM_FLAGS, *cluster, "--log", str(log),
                         "--cmd", "run sort -n 1000 --backend node", timeout=TIMEOUT)
    assert result.rc == 1, result.describe()
    assert "memnode: NVM header fails its checksum (corrupt, or not a memory node's): " \
           "not served" in node_log(log)
    assert REFUSED_BY_CLIENT in result.text, result.describe()
    assert "pager: no memory node serves: 1 refused their store (status 3)" in result.text
    assert "sort exited with code 1" in result.text and "PANIC" not in result.text


def test_memnode_nvm_flags_are_checked():
    alone = formica.run("--memnode-nvm", "16M", "--cmd", "run hello")
    assert alone.rc == 2 and "give --memnodes K" in alone.stderr, alone.describe()
    bad = formica.run("--memnodes", "1", "--memnode-cluster", "xyz", "--cmd", "run hello")
    assert bad.rc == 2 and "not 32 hex digits" in bad.stderr, bad.describe()
    dry = formica.run("--memnodes", "1", *NVM_FLAGS, "--memnode-cluster", "0f" * 16,
                      "--dry-run", "--cmd", "run hello")
    assert dry.rc == 0, dry.describe()
    [node] = [line for line in dry.lines if "nvdimm,id=" in line]  # the node's QEMU only
    assert "nvm=memnode" in node and f"memnode_cluster={'0f' * 16}" in node
    assert "nvdimm,id=nvdimm1" in node and "node-1.nvm,size=16M" in node


DATA_AT = 4096 + 32 * 4096  # a 16M node NVM: header unit, 32 units of tags, then the data


def test_a_block_scribbled_in_node_nvm_is_answered_corrupt_and_read_from_the_replica(tmp_path):
    run, log = start_sort(tmp_path, *NVM_FLAGS, sort=f"{SORT} --replicas 2", nodes=2)
    swapping = run.wait_for(lambda out, err: SORTING in out, 300)
    assert swapping, run.stdout()[-3000:] + run.stderr()
    # QEMU maps the file shared: these bytes land in node 1's NVM at once, under its tags
    with open(log.parent / f"{log.name}.node-1.nvm", "r+b") as device:
        device.seek(DATA_AT)
        device.write(b"\x5a" * (1 << 20))
    result = run.finish()
    check_verified(result, replicas=2)
    assert "answered corrupt" in node_log(log), node_log(log)[-3000:]
    assert not result.kinds("memnode_dead") and not result.kinds("pager_block_lost")
