# A memory node that also works (docs/memnode.md, "A node that also works"): `--memnode-cmd`
# runs a local program (spin) on the node's one core beside its memory-node role while a sort
# on the main machine swaps to it; `--memnode-remote-share P` weighs the role P / (1 - P)
# against local work on the node's fair scheduler. Shares are measured from the node's own
# cycle counts (ps, twice, as test_fair_sharing does), not from host wall time.
import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 600
NODE_FLAGS = ("--smp", "2", "--accel", "tcg", "--memnodes", "1", "--memnode-mem", "64M",
              "--memnode-capacity", "8M")
SORT = "run sort -n 20000 -l 256K -b 16K --backend node"
# ps every 5 s for up to 70 s of node time (the node stops with the main machine): the sort
# (~60 s) swaps hardest in some of the intervals.
SAMPLES = 14
LOCAL_WORK = "start spin 100000; " + "; ".join(["sleep 5000; ps"] * SAMPLES)
BUSIEST = 3  # the intervals in which serving took the most cycles: the client swapped hardest


def busiest_intervals(samples):
    """The local fraction of the node's core and serving's cycles over the BUSIEST intervals
    between consecutive ps samples of (spin, memnode) cycles."""
    steps = [(spin - spin_before, memnode - memnode_before)
             for (spin_before, memnode_before), (spin, memnode) in zip(samples, samples[1:])]
    busy = sorted(steps, key=lambda step: step[1], reverse=True)[:BUSIEST]
    local, remote = sum(step[0] for step in busy), sum(step[1] for step in busy)
    return local / (local + remote), remote


def shares_on_the_node(tmp_path, share):
    log = tmp_path / f"share-{share}" / "run.log"
    log.parent.mkdir()
    result = formica.run(*NODE_FLAGS, "--memnode-remote-share", share, "--memnode-cmd",
                         LOCAL_WORK, "--log", str(log), "--cmd", SORT, timeout=TIMEOUT)
    [sort] = result.kinds("sort")
    assert result.rc == 0 and sort["verified"] is True, result.describe()
    assert not result.kinds("memnode_dead"), result.describe()  # back-pressure, never errors
    node_text = (log.parent / "run.log.node-1.log").read_text(errors="replace")
    assert f"memnode: remote_share={share}: serving weighs" in node_text, node_text[-3000:]
    used = {}
    for process in formica.parse_json_lines(node_text.splitlines()):
        if process["kind"] == "process" and process["name"] in ("spin", "memnode"):
            used.setdefault(process["name"], []).append(process["cpu_cycles"])
    # the node stops when the main machine does: the samples taken until then
    assert len(used) == 2 and min(map(len, used.values())) > BUSIEST + 1, node_text
    local, remote = busiest_intervals(list(zip(used["spin"], used["memnode"])))
    assert remote > 0, used
    return local, remote, sort["elapsed_us"]


def test_remote_share_weighs_serving_against_local_work(tmp_path):
    low_local, low_remote, low_sort = shares_on_the_node(tmp_path, "0.25")
    high_local, high_remote, high_sort = shares_on_the_node(tmp_path, "0.75")
    print(f"local fraction of the node's core: {low_local:.2f} at remote_share 0.25, "
          f"{high_local:.2f} at 0.75; serving cycles {low_remote} and {high_remote}; "
          f"sort {low_sort} us and {high_sort} us")
    assert low_local >= 0.70, (low_local, high_local)  # local work keeps its share
    assert high_local <= low_local - 0.08, (low_local, high_local)  # the knob moves both sides
    assert high_remote >= 1.3 * low_remote, (low_remote, high_remote)


def test_memnode_work_flags_are_checked():
    alone = formica.run("--memnode-cmd", "run hello", "--cmd", "run hello")
    assert alone.rc == 2 and "give --memnodes K" in alone.stderr, alone.describe()
    for bad in ("1", "0", "1.5", "0.0", "x"):
        refused = formica.run("--memnodes", "1", "--memnode-remote-share", bad, "--cmd",
                              "run hello")
        assert refused.rc == 2 and "a fraction between 0 and 1" in refused.stderr, bad
    dry = formica.run("--memnodes", "1", "--memnode-remote-share", "0.25", "--memnode-cmd",
                      "run hello", "--dry-run", "--cmd", "run hello")
    assert dry.rc == 0, dry.describe()
    [node] = [line for line in dry.lines if "--id%201" in line]
    assert "remote_share=0.25" in node and "cmd=start%20--driver" in node, node
    assert "%3B%20run%20hello%3B%20wait" in node, node


@pytest.mark.parametrize("driver", [False, True])
def test_share_weight_refusals(driver):
    flags = "--driver " if driver else ""
    mode = " driver" if driver else ""
    result = formica.run("--cmd", f"run {flags}hostile weight{mode}", timeout=120)
    assert result.rc == 0, result.describe()
    cases = {case["case"]: case for case in result.kinds("hostile")}
    assert set(cases) == {"weight_zero", "weight_above_max", "weight_above_one",
                          "weight_below_one", "weight_one"}, result.describe()
    assert all(case["ok"] for case in cases.values()), result.describe()
    assert cases["weight_above_one"]["result"] == (0 if driver else -8), result.describe()
