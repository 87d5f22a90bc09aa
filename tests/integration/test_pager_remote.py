# The remote pager under real conditions (docs/pager.md, docs/memnode.md): a sort at a quarter
# of its working set on a memory node while the host is loaded (slow is not dead); two nodes
# with two replicas, one node's QEMU killed mid-sort (nothing lost); an NBD export from nbdkit
# as a block backend; the shell's pagerstat; progress lines of long runs.
import os
import re
import shutil
import signal

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

DISK_IMAGE = formica.OUT_DIR / "disk.img"
# Records and a quarter of the working set (records, scratch and text: ~100 bytes a record).
BIG_SORT = (40000, "-n 40000 -l 1M -b 16K -P lru")
ISSUE_SORT = (20000, "-n 20000 -l 512K -b 16K -P lru")  # the run that once failed under load


def boot(commands, *flags, timeout=900):
    return formica.run("--smp", "2", "--accel", "tcg", *flags, "--cmd", commands, timeout=timeout)


def check_verified_sort(result, records, backend, replicas=1):
    sorts = result.kinds("sort")
    assert result.rc == 0 and len(sorts) == 1, result.describe()
    assert sorts[0]["verified"] is True and sorts[0]["records"] == records, result.describe()
    assert sorts[0]["backend"] == backend and sorts[0]["replicas"] == replicas
    assert sorts[0]["swap_in_blocks"] > 0 and sorts[0]["swap_out_blocks"] > 0
    assert "killed by page fault" not in result.text


def sort_under_load(records, arguments):
    with formica.CpuHog():
        result = boot(f"run sort {arguments} --backend node; pagerstat", "--memnodes", "1",
                      timeout=1500)
    check_verified_sort(result, records, "node")
    assert not result.kinds("memnode_dead"), result.describe()
    progress = [line for line in result.kinds("progress") if line["program"] == "sort"]
    assert progress, "a long sort reports its progress"
    [node] = result.kinds("pagernode")
    assert node["alive"] is True and node["stores"] > 0, result.describe()
    return result


def test_sort_on_a_memory_node_with_the_host_loaded():
    sort_under_load(*ISSUE_SORT)


@pytest.mark.slow
def test_sort_40000_records_on_a_memory_node_with_the_host_loaded_three_times():
    for _ in range(3):
        sort_under_load(*BIG_SORT)


def node_pid(stderr, index):
    match = re.search(rf"memory node {index}: pid (\d+)", stderr)
    return int(match.group(1)) if match else None


def test_two_replicas_survive_a_node_killed_mid_sort(tmp_path):
    run = formica.start(tmp_path, "--smp", "2", "--accel", "tcg", "--memnodes", "2",
                        "--memnode-mem", "128M", "--memnode-capacity", "64M",
                        "--cmd", "run sort -n 20000 -l 512K -b 16K -P lru --backend node "
                        "--replicas 2; pagerstat", timeout=900)
    # Wait until the sort is merging (blocks are on both nodes), then kill node 2's QEMU.
    merging = run.wait_for(lambda out, err: '"phase":"records merged"' in out, 600)
    pid = node_pid(run.stderr(), 2)
    assert merging and pid is not None, run.stdout()[-3000:] + run.stderr()
    os.kill(pid, signal.SIGKILL)
    result = run.finish()
    check_verified_sort(result, 20000, "node", replicas=2)
    [dead] = result.kinds("memnode_dead")
    assert dead["node"] == 2 and dead["copies_lost"] > 0, result.describe()
    assert dead["blocks_without_copy"] == 0, result.describe()
    nodes = {line["node"]: line for line in result.kinds("pagernode")}
    assert nodes[1]["alive"] is True and nodes[2]["alive"] is False, result.describe()
    assert "memory node 2 had exited" in result.stderr, result.stderr


def test_nbd_export_as_a_block_backend(tmp_path):
    if shutil.which("nbdkit") is None:
        pytest.fail("nbdkit is missing: run build/deps.sh", pytrace=False)
    disk = tmp_path / "disk.img"
    shutil.copyfile(DISK_IMAGE, disk)
    result = boot("run sort -n 10000 -l 256K -b 16K -P lru --backend block; "
                  "run memseq -s 2M -l 256K -b 64K --backend block", "--disk", str(disk),
                  "--nbd", "32M", timeout=600)
    check_verified_sort(result, 10000, "block")
    [memseq] = result.kinds("memseq")
    assert memseq["verified"] is True and memseq["swap_in_blocks"] > 0, result.describe()
    assert "pager: block device of 32 MiB as remote memory" in result.text
    assert "nbd: nbdkit memory export of 32 MiB" in result.stderr


def test_block_backend_without_a_device_is_a_clear_error():
    result = boot("run sort -n 100 --backend block; run hello", timeout=120)
    assert "pager: no second virtio-blk disk" in result.text, result.describe()
    assert "sort exited with code 1" in result.text and result.kinds("hello")


def test_nbd_needs_the_virtio_disk():
    result = formica.run("--nbd", "16M", "--cmd", "run hello", timeout=30)
    assert result.rc == 2 and "--nbd needs the virtio disk" in result.stderr, result.describe()


def test_replicas_beyond_the_live_nodes_are_refused():
    result = boot("run sort -n 1000 --backend node --replicas 2; run hello", "--memnodes", "1",
                  "--memnode-mem", "64M", "--memnode-capacity", "16M", timeout=300)
    assert "pager: 2 replicas asked, 1 memory node(s) alive" in result.text, result.describe()
    assert "sort exited with code 1" in result.text and result.kinds("hello")


def test_prefetch_fetches_several_blocks_at_once_from_a_node():
    # teramem_prefetch of 512 KiB ahead (8 blocks of 64 KiB): the fetches are in flight
    # together; every byte reads back right, and the nodes saw the retrieves.
    result = boot("run memseq -s 4M -l 1M -b 64K --backend node --prefetch 512K; pagerstat",
                  "--memnodes", "1", timeout=600)
    [line] = [m for m in result.kinds("memseq") if m["mode"] == "sequential"]
    assert result.rc == 0 and line["verified"] is True, result.describe()
    assert line["prefetch_bytes"] == 512 << 10 and line["swap_in_blocks"] >= 64, line
    [summary] = result.kinds("pagernodes")
    assert summary["peak_transfers"] >= 2, result.describe()
