# Memory nodes over virtio-net (docs/memnode.md): `build/run --memnodes K` starts K node
# machines on a loopback-only segment; memclient stores, retrieves and verifies blocks of
# 4 KiB-1 MiB placed first-free across them; a dead or full node gives a clean error.
import re

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 180
SMALL_NODES = ["--memnode-mem", "64M", "--memnode-capacity", "8M"]
E_IO = -20
E_NO_SPACE = -17


def memclient_runs(*commands, nodes=2, extra=()):
    cmd = "; ".join(f"run --driver memclient {nodes} {arguments}" for arguments in commands)
    return formica.run("--smp", "2", "--accel", "tcg", "--memnodes", str(nodes), *SMALL_NODES,
                       *extra, "--cmd", cmd, timeout=TIMEOUT)


def test_blocks_of_4k_64k_1m_across_two_nodes():
    run = memclient_runs("4 64", "64 32", "1024 12")
    assert run.rc == 0, run.describe()
    results = run.kinds("memclient")
    assert [result["block_bytes"] for result in results] == [4096, 65536, 1 << 20], run.describe()
    for result in results:
        assert result["ok"] and result["verified"] and result["bad_blocks"] == 0, run.describe()
        assert result["nodes"] == 2
        assert result["store_bytes_per_s"] > 0 and result["retrieve_bytes_per_s"] > 0
    [negotiated] = run.kinds("memnegotiate")[:1]
    assert negotiated["capacity_bytes"] == 2 * (8 << 20)  # capacity is the sum over nodes
    # First-free placement: node 1 fills up (8 MiB = 8 blocks of 1 MiB) before node 2.
    assert results[0]["placement"] == [64, 0]
    assert results[2]["placement"] == [8, 4], run.describe()
    assert "memory node 1 stopped" in run.stderr and "memory node 2 stopped" in run.stderr
    # the card's own MSI-X vector: never polled for want of a free INTx line
    assert re.search(r"net: virtio-net at \S+, MAC \S+, frames up to \d+ bytes, msi-x interrupts",
                     run.text), run.describe()


def test_dead_node_gives_a_clean_error():
    run = memclient_runs("64 8", nodes=1, extra=["--memnode-args", "--exit-after 3"])
    assert run.rc == 1, run.describe()  # the failed command fails the run, nothing hangs
    assert run.seconds < TIMEOUT, run.describe()
    [result] = run.kinds("memclient")
    assert result == {**result, "ok": False, "stage": "store", "block": 3, "error": E_IO,
                      "dead_node": True}, run.describe()
    assert "PANIC" not in run.text
    assert "memory node 1 had exited" in run.stderr, run.describe()


def test_dead_node_leaves_the_machine_working():
    run = formica.run("--smp", "2", "--accel", "tcg", "--memnodes", "1", *SMALL_NODES,
                      "--memnode-args", "--exit-after 2",
                      "--cmd", "run --driver memclient 1 4 8; run hello @1", timeout=TIMEOUT)
    [result] = run.kinds("memclient")
    assert result["dead_node"] is True, run.describe()
    [hello] = run.kinds("hello")
    assert hello["core"] == 1, run.describe()


def test_full_nodes_are_reported():
    run = memclient_runs("1024 9", nodes=1)
    assert run.rc == 1, run.describe()
    [result] = run.kinds("memclient")
    assert result["stage"] == "allocate" and result["block"] == 8, run.describe()
    assert result["error"] == E_NO_SPACE
    assert "memory nodes full after 8 blocks" in run.text


def test_missing_node_fails_negotiation_cleanly():
    # Two nodes asked for, one started: negotiation gives up after its wait.
    run = formica.run("--smp", "2", "--accel", "tcg", "--memnodes", "1", *SMALL_NODES,
                      "--cmd", "run --driver memclient 2 4 1 5", timeout=TIMEOUT)
    assert run.rc == 1, run.describe()
    [result] = run.kinds("memclient")
    assert result["stage"] == "negotiate" and result["nodes_found"] == 1, run.describe()


def test_node_logs_and_network_are_loopback_only(tmp_path):
    argv = formica.run("--memnodes", "2", "--dry-run", "--cmd", "run hello", timeout=10)
    assert argv.rc == 0, argv.describe()
    netdevs = [line for line in argv.lines if "-netdev" in line]
    assert len(netdevs) == 3  # the main machine and two nodes
    for line in netdevs:
        assert "localaddr=127.0.0.1" in line and "mcast=230.0.0.1:" in line
    macs = {word for line in netdevs for word in line.split(",") if word.startswith("mac=")}
    assert len(macs) == 3
