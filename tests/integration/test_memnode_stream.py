# A memory node's local STREAM (apps/memstream, docs/memnode.md "Local work: memstream") on its
# DRAM and on its local NVDIMM (--memnode-local-nvm, role local) while a client stores into and
# retrieves from the node's store in its other NVDIMM (--memnode-nvm): throughput per interval
# from the node's TSC, the store's blocks intact; memstream nvm without a local NVDIMM refused;
# and two client machines (--memnode-clients 2) swapping to one node, each in its own part.
import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

NODE = ("--smp", "2", "--accel", "tcg", "--memnodes", "1", "--memnode-mem", "128M",
        "--memnode-capacity", "64M")
# memstream on NVM for 10 intervals of 1 s, then on DRAM for 3; meanwhile the main machine's
# memclients store 64 blocks of 64 KiB each time into the node's NVM store and read them back
STREAM = ("run --driver memstream nvm -s 6M -i 1000 -n 10; "
          "run --driver memstream dram -s 6M -i 1000 -n 3")
# then long enough for both memstream runs to end on a loaded host (the node stops with the
# main machine)
CLIENT = "; ".join(["run --driver memclient 1 64 64; sleep 1500"] * 4) + "; sleep 25000"
FLOAT_BYTES = 8


def stream_lines(node_text, memory):
    lines = [line for line in formica.parse_json_lines(node_text.splitlines())
             if line.get("memory") == memory]
    return ([line for line in lines if line["kind"] == "memstream"],
            [line for line in lines if line["kind"] == "memstream_result"])


def test_memstream_on_dram_and_nvm_leaves_the_store_intact(tmp_path):
    log = tmp_path / "run.log"
    result = formica.run(*NODE, "--memnode-nvm", "80M", "--memnode-local-nvm", "16M",
                         "--memnode-cmd", STREAM, "--log", str(log), "--cmd", CLIENT, timeout=400)
    clients = result.kinds("memclient")
    assert result.rc == 0 and len(clients) == 4, result.describe()
    assert all(c["ok"] and c["verified"] and c["bad_blocks"] == 0 for c in clients), clients
    node_text = (tmp_path / "run.log.node-1.log").read_text(errors="replace")
    assert "answered corrupt" not in node_text, node_text[-3000:]
    assert "memstream: local NVDIMM at 0x" in node_text, node_text[-3000:]
    for memory, count in (("nvm", 10), ("dram", 3)):
        intervals, [run] = stream_lines(node_text, memory)
        assert [line["interval"] for line in intervals] == list(range(1, count + 1)), intervals
        assert run["verified"] and run["rounds"] > 0, run
        for line in intervals:  # the TSC's rate turns bytes per cycle into MB/s
            assert line["bytes"] > 0 and line["cycles"] > 0 and line["bytes_per_cycle"] > 0
            seconds = line["cycles"] / run["tsc_hz"]
            assert line["mb_per_s"] == pytest.approx(line["bytes"] / seconds / 1e6, rel=1e-3)
            assert 0 < line["own_cycles"] <= line["cycles"] * 1.01, line
        for kernel in ("copy", "scale", "add", "triad"):
            assert run[f"{kernel}_mb_per_s"] > 0, run
    nvm_intervals, _ = stream_lines(node_text, "nvm")
    # the node served while memstream wrote its NVM (the role's cycles in memstream's intervals)
    assert any(line["serving_cycles"] > 0 for line in nvm_intervals), nvm_intervals
    store = (tmp_path / "run.log.node-1.nvm").read_bytes()
    local = (tmp_path / "run.log.node-1.local.nvm").read_bytes()
    assert store[:8] == b"FORMNODE", store[:16]  # the store's header, untouched
    assert b"FORMNODE" not in local[:4096]
    # memstream's arrays are in the local NVDIMM: its first array holds a STREAM value
    assert local[:FLOAT_BYTES] != bytes(FLOAT_BYTES), local[:16]


def test_memstream_without_a_local_nvdimm_is_refused(tmp_path):
    log = tmp_path / "run.log"
    result = formica.run(*NODE, "--memnode-nvm", "80M", "--memnode-cmd",
                         "run --driver memstream nvm -s 3M -n 1", "--log", str(log),
                         "--cmd", "run --driver memclient 1 64 8; sleep 3000", timeout=300)
    [memclient] = result.kinds("memclient")
    assert result.rc == 0 and memclient["verified"], result.describe()
    node_text = (tmp_path / "run.log.node-1.log").read_text(errors="replace")
    assert "memstream: no local NVDIMM" in node_text, node_text[-3000:]
    assert "memstream exited with code 1" in node_text, node_text[-3000:]
    assert '"kind":"memstream"' not in node_text


def test_two_client_machines_swap_to_one_node_each_in_its_part(tmp_path):
    # Both machines sort records of their own seed through 256 KiB on one node of 32 MiB at
    # the same time: each pager places its blocks in its own half of the node
    # (memnode_part=1/2 and 2/2), so neither overwrites the other's and both verify (with the
    # whole node each, both place from slot 0 and the sorts fail).
    log = tmp_path / "run.log"
    sort = "run sort -n 20000 -l 256K -b 16K --backend node --seed"
    result = formica.run("--smp", "2", "--accel", "tcg", "--memnodes", "1", "--memnode-mem",
                         "96M", "--memnode-capacity", "32M", "--memnode-clients", "2",
                         "--client-cmd", f"{sort} 2", "--log", str(log), "--cmd", f"{sort} 1",
                         timeout=600)
    assert result.rc == 0, result.describe()
    other = (tmp_path / "run.log.client-2.log").read_text(errors="replace")
    sorts = [result.kinds("sort"),
             [line for line in formica.parse_json_lines(other.splitlines())
              if line["kind"] == "sort"]]
    assert all(len(found) == 1 and found[0]["verified"] for found in sorts), sorts
    assert "machine 1 of 2: part 1/2 of every node" in "\n".join(result.lines), result.describe()
    assert "machine 2 of 2: part 2/2 of every node" in other, other[-3000:]
    assert "client machine 2 reported success" in result.stderr, result.stderr[-2000:]


def test_client_machine_flags_are_checked():
    for bad in ("0", "5"):
        refused = formica.run("--memnodes", "1", "--memnode-clients", bad, "--cmd", "run hello")
        assert refused.rc == 2 and "--memnode-clients" in refused.stderr, refused.describe()
    alone = formica.run("--memnode-clients", "2", "--cmd", "run hello")
    assert alone.rc == 2 and "give --memnodes K" in alone.stderr, alone.describe()
    local = formica.run("--memnode-local-nvm", "16M", "--cmd", "run hello")
    assert local.rc == 2 and "give --memnodes K" in local.stderr, local.describe()
    dry = formica.run("--memnodes", "1", "--memnode-clients", "3", "--client-cmd", "run hello",
                      "--memnode-nvm", "16M", "--memnode-local-nvm", "8M", "--dry-run",
                      "--cmd", "run memseq")
    assert dry.rc == 0, dry.describe()
    [node] = [line for line in dry.lines if "--id%201" in line]
    assert "nvm=memnode,local" in node and "node-1.local.nvm" in node, node
    parts = [line for line in dry.lines if "memnode_part=" in line]
    assert len(parts) == 3, dry.lines
    for index, line in enumerate(parts, start=1):
        assert f"memnode_part={index}/3" in line, line
    assert all("mac=52:54:00:4d:4e:4" in line for line in parts[1:]), parts
    assert all("cmd=run%20hello" in line for line in parts[1:]), parts
