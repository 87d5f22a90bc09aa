# Memory nodes over QEMU's Intel e1000e (82574L) with build/run --nic e1000e (docs/drivers.md,
# docs/memnode.md): a sort swapping to a node, verified; memclient across cards of both kinds
# (the protocol does not care which); the link taken down mid-sort through QEMU's monitor
# (`set_link`), longer than the dead-node deadline: unreachable, not dead, and the sort goes on
# when it returns; a failed EEPROM read (fault injection) leaves the card unused, with a clean
# error and a working machine.
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

import formica

sys.path.insert(0, str(formica.REPO_ROOT / "build"))
from runner import monitor  # noqa: E402

pytestmark = pytest.mark.usefixtures("built")

SORT = "run sort -n 20000 -l 512K -b 16K -P lru --backend node"
SMALL_NODES = ["--memnode-mem", "64M", "--memnode-capacity", "8M"]
LINK_DOWN_SECONDS = 25  # longer than the 20 s after which a silent node is dead
JUMBO_FRAGMENT = 8192   # the e1000e's 9014-byte frames carry 8 KiB fragments
E_IO = -20


def check_verified_sort(result, records=20000):
    sorts = result.kinds("sort")
    assert result.rc == 0 and len(sorts) == 1, result.describe()
    [sort] = sorts
    assert sort["verified"] is True and sort["records"] == records, result.describe()
    assert sort["backend"] == "node" and sort["swap_in_blocks"] > 0 and sort["swap_out_blocks"] > 0
    assert "killed by page fault" not in result.text


def test_sort_on_a_memory_node_over_e1000e():
    result = formica.run("--smp", "2", "--accel", "tcg", "--memnodes", "1", "--nic", "e1000e",
                         "--cmd", f"{SORT}; pagerstat", timeout=900)
    check_verified_sort(result)
    assert "net: e1000e at " in result.text and "msi interrupts, link up" in result.text
    assert "8192-byte fragments over e1000e" in result.text, result.describe()
    [nodes] = result.kinds("pagernodes")
    assert nodes["nic"] == "e1000e" and nodes["fragment_bytes"] == JUMBO_FRAGMENT, nodes
    [node] = result.kinds("pagernode")
    assert node["alive"] is True and node["reachable"] is True and node["stores"] > 0
    assert "(e1000e)" in result.stderr  # the runner's line for the node names its card


@pytest.mark.parametrize("client, nodes, append", [
    ("e1000e", "e1000e", "e1000e_irq=intx"),  # the pin instead of MSI
    ("e1000e", "virtio", ""),
    ("virtio", "e1000e", ""),
])
def test_memclient_across_cards(client, nodes, append):
    # The fragment is what both ends take: 8 KiB whenever an e1000e is on the way.
    flags = ["--append", append] if append else []
    result = formica.run("--smp", "2", "--accel", "tcg", "--memnodes", "2", *SMALL_NODES,
                         "--nic", client, "--memnode-nic", nodes, *flags,
                         "--cmd", "run --driver memclient 2 4 64; run --driver memclient 2 1024 12",
                         timeout=300)
    assert result.rc == 0, result.describe()
    small, large = result.kinds("memclient")
    for run in (small, large):
        assert run["ok"] and run["verified"] and run["bad_blocks"] == 0, result.describe()
        assert run["nic"] == ("virtio-net" if client == "virtio" else "e1000e")
    assert large["placement"] == [8, 4], result.describe()
    fragments = {line["fragment_bytes"] for line in result.kinds("memnegotiate")}
    assert fragments == {4096, JUMBO_FRAGMENT}, result.describe()  # 4 KiB blocks: one fragment
    if append:
        assert "intx interrupts" in result.text, result.describe()


def monitor_socket():
    """A short path (unix sockets take ~100 bytes) for the main machine's extra monitor."""
    return Path(tempfile.mkdtemp(prefix="formica-link-")) / "monitor.sock"


@pytest.mark.parametrize("nic", ["e1000e", "virtio"])
def test_link_down_mid_sort_is_unreachable_not_dead(tmp_path, nic):
    socket_path = monitor_socket()
    run = formica.start(tmp_path, "--smp", "2", "--accel", "tcg", "--memnodes", "1",
                        "--nic", nic, "--qemu", f"-monitor unix:{socket_path},server=on,wait=off",
                        "--cmd", f"{SORT}; pagerstat", timeout=900)
    try:
        swapping = run.wait_for(lambda out, err: '"phase":"records merged"' in out, 600)
        assert swapping, run.stdout()[-3000:] + run.stderr()
        monitor.command(str(socket_path), "set_link memnet off")
        unreachable = "pager: memory node 1 unreachable: the network link is down"
        assert run.wait_for(lambda out, err: unreachable in out, 60), run.stdout()[-3000:]
        time.sleep(LINK_DOWN_SECONDS)
        monitor.command(str(socket_path), "set_link memnet on")
        result = run.finish()
    finally:
        shutil.rmtree(socket_path.parent, ignore_errors=True)
    check_verified_sort(result)
    card = "e1000e" if nic == "e1000e" else "virtio-net"
    down = result.text.index(f"net: {card} at ")
    assert "link down (frames cannot be sent or received)" in result.text[down:], result.describe()
    assert "pager: memory node 1 reachable again: the network link is back" in result.text
    assert not result.kinds("memnode_dead"), result.describe()
    [node] = result.kinds("pagernode")
    assert node["alive"] is True and node["reachable"] is True, result.describe()
    [nodes] = result.kinds("pagernodes")
    assert nodes["link_downs"] == 1 and nodes["blocks_lost"] == 0, result.describe()


@pytest.mark.parametrize("fault, said", [
    ("eeprom-timeout", "EEPROM read of word 0x00 did not finish within 10 ms"),
    ("eeprom-checksum", "EEPROM words 0x00-0x3f sum to 0xb9b9, not 0xbaba"),
])
def test_failed_eeprom_leaves_the_card_unused(fault, said):
    result = formica.run("--smp", "2", "--accel", "tcg", "--memnodes", "1", *SMALL_NODES,
                         "--nic", "e1000e", "--append", f"e1000e_fault={fault}",
                         # memclient first: the pager keeps the card it tried for its lifetime
                         "--cmd", "run --driver memclient 1 64 4; "
                         "run sort -n 1000 --backend node; run hello", timeout=300)
    assert result.rc == 1, result.describe()  # the failed commands fail the run; nothing hangs
    assert "net: e1000e at 00:" in result.text and said in result.text, result.describe()
    assert f"(injected: e1000e_fault={fault}); the card is not used" in result.text
    assert "pager: memory nodes unreachable: no usable network card (input/output error)" \
        in result.text, result.describe()
    assert "sort exited with code 1" in result.text
    [memclient] = result.kinds("memclient")
    assert memclient == {"kind": "memclient", "ok": False, "stage": "network", "error": E_IO}
    assert result.kinds("hello") and "PANIC" not in result.text
    assert "link up" not in result.text  # the card was never started


def test_nic_flags():
    both = formica.run("--memnodes", "2", "--nic", "e1000e", "--dry-run", "--cmd", "run hello")
    assert both.rc == 0, both.describe()
    cards = [line for line in both.lines if "-netdev" in line]
    assert len(cards) == 3 and all("-device e1000e,netdev=memnet," in line for line in cards)
    mixed = formica.run("--memnodes", "1", "--nic", "e1000e", "--memnode-nic", "virtio",
                        "--dry-run", "--cmd", "run hello")
    main, node = [line for line in mixed.lines if "-netdev" in line]
    assert "e1000e,netdev=memnet,mac=52:54:00:4d:4e:00" in main
    assert "virtio-net-pci,netdev=memnet,mac=52:54:00:4d:4e:01,host_mtu=32800" in node
    alone = formica.run("--nic", "e1000e", "--cmd", "run hello")
    assert alone.rc == 2 and "give --memnodes K" in alone.stderr, alone.describe()
    wrong = formica.run("--memnodes", "1", "--nic", "rtl8139", "--cmd", "run hello")
    assert wrong.rc == 2 and "invalid choice" in wrong.stderr, wrong.describe()
