# One-sided access to persistent memory nodes (docs/memnode.md, "One-sided access"):
# `build/run --memnode-ivshmem` also attaches each node's NVDIMM file to the client machines as
# an ivshmem-plain device; the pager negotiates with the node over the network, then stores and
# retrieves by memcpy into the node's store, writing the tags itself in the node's order. The
# node's own counters show it served none of those blocks; restarted, it finds them as its own.
import json
import re
import struct

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 600
NODE_FLAGS = ("--smp", "2", "--accel", "tcg", "--memnode-mem", "64M", "--memnode-capacity", "8M",
              "--memnode-nvm", "16M")
ONE_SIDED = ("--memnode-ivshmem", "--memnode-args", "--report-ms 2000")
SORT = "run sort -n 20000 -l 256K -b 16K --backend node"
SORTING = '"phase":"records merged"'
ONE_SIDED_LINE = "pager: node 1 one-sided through ivshmem (BAR 2, 16 MiB)"
TAG = struct.Struct("<QIIQQ")  # start unit, block bytes, sequence, checksum, valid


def node_log(log):
    return (log.parent / f"{log.name}.node-1.log").read_text(errors="replace")


def node_reports(text):
    """The node's own counters: the @json memnode lines it prints every 2 s (--report-ms)."""
    return [json.loads(line[len("@json "):]) for line in text.splitlines()
            if line.startswith('@json {"kind":"memnode",')]


def sealed_tags(nvm_path):
    """Tags sealed in the node's NVM file (FORMNODE header, then a tag per 4 KiB unit)."""
    image = nvm_path.read_bytes()
    assert image[:8] == b"FORMNODE", image[:16]
    units = struct.unpack_from("<Q", image, 88)[0]  # the header's geometry[1]
    tags = [TAG.unpack_from(image, 4096 + TAG.size * unit) for unit in range(units)]
    return [tag for unit, tag in enumerate(tags) if tag[4] != 0 and tag[0] == unit]


AFTER_RESTART = "run sort -n 4000 -l 64K -b 16K --backend node"  # the pager's cluster stays open


def sort_run(tmp_path, *flags, then=""):
    log = tmp_path / "run.log"
    run = formica.start(tmp_path, *NODE_FLAGS, "--memnodes", "1", *flags, "--log", str(log),
                        "--cmd", f"{SORT}; {then}pagerstat", timeout=TIMEOUT)
    return run, log


def check_one_sided_sort(result, sorts=1):
    assert len(result.kinds("sort")) == sorts, result.describe()
    for sort in result.kinds("sort"):
        assert result.rc == 0 and sort["verified"] is True, result.describe()
        assert sort["swap_in_blocks"] > 0 and sort["swap_out_blocks"] > 0, result.describe()
    assert ONE_SIDED_LINE in result.text, result.describe()
    [node] = result.kinds("pagernode")
    assert node["one_sided"] is True and node["one_sided_corrupt"] == 0, result.describe()
    assert node["one_sided_stores"] > 0 and node["one_sided_retrieves"] > 0, result.describe()
    assert not result.kinds("memnode_dead") and "PANIC" not in result.text, result.describe()
    return node


def check_node_served_none(text):
    """The node negotiated with the pager but stored and retrieved nothing itself."""
    reports = [report for report in node_reports(text) if report["negotiations"] > 0]
    assert reports, text[-3000:]
    for report in reports:
        assert report["stores"] == 0 and report["retrieves"] == 0, report
        assert report["fragments_in"] == 0 and report["fragments_out"] == 0, report
    assert reports[-1]["layouts_given"] >= 1, reports[-1]


def test_sort_swaps_one_sided_and_the_node_serves_none_of_it(tmp_path):
    run, log = sort_run(tmp_path, *ONE_SIDED)
    result = run.finish()
    node = check_one_sided_sort(result)
    check_node_served_none(node_log(log))
    tags = sealed_tags(log.parent / f"{log.name}.node-1.nvm")
    assert tags and all(tag[1] == 16384 for tag in tags), tags[:4]  # the pager's blocks
    assert len(tags) <= node["one_sided_stores"], (len(tags), node)
    assert "nvm: pid" in result.text and "maps persistent memory" in result.text


def test_restarted_node_finds_the_blocks_written_one_sided(tmp_path):
    run, log = sort_run(tmp_path, *ONE_SIDED, then=f"{AFTER_RESTART}; ")
    assert run.wait_for(lambda out, err: SORTING in out, 300), run.stdout()[-3000:]
    (log.parent / f"{log.name}.node-1.restart").touch()
    assert run.wait_for(lambda out, err: "memory node 1 restarted" in err, 60), run.stderr()
    result = run.finish()
    check_one_sided_sort(result, sorts=2)
    [nodes] = result.kinds("pagernodes")
    assert nodes["blocks_lost"] == 0 and nodes["copies_lost"] == 0, result.describe()
    text = node_log(log)
    kept = re.search(r"store found: generation 2, (\d+) blocks kept", text)
    assert kept and int(kept.group(1)) > 0, text[-3000:]  # written one-sided: the node stored none
    check_node_served_none(text)
    # the pager saw the new generation in the BAR's header, negotiated again, went on one-sided
    [restart] = result.kinds("memnode_restart")
    assert restart == {"kind": "memnode_restart", "node": 1, "generation": 2,
                       "previous_generation": 1, "kept": True}, result.describe()
    assert re.search(r"memnode client: node 1 one-sided through ivshmem \S+ \(BAR 2 at 0x[0-9a-f]+, "
                     r"16 MiB, generation 2\)", result.text), result.describe()


def scribble_on_stored_blocks(nvm_path):
    """Flips a byte inside every block sealed in the node's NVM file (host writes, as a
    stray write or a bad line would): each is then answered corrupt until stored again."""
    image = nvm_path.read_bytes()
    data_at = struct.unpack_from("<Q", image, 96)[0]  # the header's geometry[2]
    tags = sealed_tags(nvm_path)
    with open(nvm_path, "r+b") as device:
        for tag in tags:
            device.seek(data_at + tag[0] * 4096 + 100)
            byte = device.read(1)
            device.seek(data_at + tag[0] * 4096 + 100)
            device.write(bytes([byte[0] ^ 0x5a]))
    return len(tags)


def test_a_corrupt_block_read_one_sided_is_not_served(tmp_path):
    log = tmp_path / "run.log"
    run = formica.start(tmp_path, *NODE_FLAGS, "--memnodes", "2", *ONE_SIDED, "--log", str(log),
                        "--cmd", f"{SORT} --replicas 2; pagerstat", timeout=TIMEOUT)
    assert run.wait_for(lambda out, err: SORTING in out, 300), run.stdout()[-3000:]
    assert scribble_on_stored_blocks(log.parent / f"{log.name}.node-1.nvm") > 0
    result = run.finish()
    [sort] = result.kinds("sort")
    assert result.rc == 0 and sort["verified"] is True, result.describe()  # from node 2's copies
    assert "read one-sided does not match its tag's checksum: corrupt, not served" in result.text
    first, second = result.kinds("pagernode")
    assert first["one_sided"] and second["one_sided"], result.describe()
    assert first["one_sided_corrupt"] > 0 and second["one_sided_corrupt"] == 0, result.describe()
    assert "does not match what was stored" not in result.text, result.describe()


def test_memclient_one_sided_and_without_the_device_two_sided(tmp_path):
    log = tmp_path / "run.log"
    one_sided = formica.run(*NODE_FLAGS, "--memnodes", "1", *ONE_SIDED, "--log", str(log),
                            "--cmd", "run --driver memclient 1 4 64; run --driver memclient 1 1024 6;"
                            " sleep 2500", timeout=TIMEOUT)
    assert one_sided.rc == 0, one_sided.describe()
    for memclient in one_sided.kinds("memclient"):
        assert memclient["verified"] and memclient["bad_blocks"] == 0, one_sided.describe()
    assert "memnode client: node 1 one-sided through ivshmem" in one_sided.text
    check_node_served_none(node_log(log))
    # the boot option alone, no device: said, and the blocks go over the network
    log = tmp_path / "two.log"
    two_sided = formica.run(*NODE_FLAGS, "--memnodes", "1", "--append", "memnode_ivshmem=on",
                            "--memnode-args", "--report-ms 1000", "--log", str(log),
                            "--cmd", "run --driver memclient 1 16 8; sleep 1500", timeout=TIMEOUT)
    assert two_sided.rc == 0 and two_sided.kinds("memclient")[0]["verified"], two_sided.describe()
    assert "memnode client: node 1 stays two-sided (over the network): no ivshmem device" \
        in two_sided.text, two_sided.describe()
    assert node_reports(node_log(log))[-1]["stores"] == 8


def test_memnode_ivshmem_flags_are_checked():
    alone = formica.run("--memnodes", "1", "--memnode-ivshmem", "--cmd", "run hello")
    assert alone.rc == 2 and "--memnode-ivshmem: the one-sided path writes into the nodes' NVM " \
        "store; give --memnode-nvm SIZE" in alone.stderr, alone.describe()
    no_nodes = formica.run("--memnode-ivshmem", "--cmd", "run hello")
    assert no_nodes.rc == 2 and "--memnode-ivshmem: give --memnodes K" in no_nodes.stderr
    odd = formica.run("--memnodes", "1", "--memnode-nvm", "24M", "--memnode-ivshmem",
                      "--cmd", "run hello")
    assert odd.rc == 2 and "24M is not a power of two" in odd.stderr, odd.describe()
    dry = formica.run("--memnodes", "2", "--memnode-nvm", "16M", "--memnode-ivshmem",
                      "--memnode-clients", "2", "--dry-run", "--cmd", "run hello")
    assert dry.rc == 0, dry.describe()
    clients = [line for line in dry.lines if "ivshmem-plain" in line]
    nodes = [line for line in dry.lines if "nvdimm,id=" in line]
    assert len(clients) == 2 and len(nodes) == 2, dry.describe()  # main and client 2; 2 nodes
    for line in clients:
        assert "memnode_ivshmem=on" in line and line.count("ivshmem-plain,memdev=") == 2
        for index in (1, 2):
            assert f"memory-backend-file,id=ivshmem{index},share=on,mem-path=" in line
            assert f"node-{index}.nvm,size=16M" in line
    for line in nodes:
        assert "memnode_ivshmem" not in line and "ivshmem-plain" not in line
