# Server instances (docs/design.md "Server instances", docs/ica.md): the test server `where`
# (tests/programs/where) runs as one instance per core of its placement list; a client on
# each core reaches its own core's instance, reaches every instance by index, and a kill of
# one instance leaves the other serving while init restarts the killed one alone (its kept
# region, "where" for instance 0, "where.1" for instance 1, survives). Bad lists give the
# placement parser's errors and the safe default.
import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 120
E_BUSY = 6  # lib/include/formica/errors.h: the own region, mapped already


def boot_with_placement(tmp_path, text, commands, smp=2):
    placement = tmp_path / "instances.conf"
    placement.write_text(text)
    return formica.run("--smp", str(smp), "--accel", "tcg", "--placement", str(placement),
                       "--cmd", commands, timeout=TIMEOUT)


def answers(result, caller_core, how):
    return [a for a in result.kinds("where") if a["caller_core"] == caller_core and a["how"] == how]


def instances(result):
    """The `servers where` reports in order, each {index: its @json line}."""
    reports, current = [], {}
    for line in result.kinds("server_instance"):
        if line["server"] != "where":
            continue
        if line["index"] in current:
            reports.append(current)
            current = {}
        current[line["index"]] = line
    return reports + ([current] if current else [])


def test_each_core_reaches_its_own_instance_and_a_killed_one_restarts_alone(tmp_path):
    result = boot_with_placement(
        tmp_path, "where 0,1\napp 0,1\n",
        "placement; servers where; run where ask @0; run where ask @1; kill where; "
        "run where ask @1; sleep 300; run where ask @0; servers where")
    assert result.rc == 0, result.describe()
    assert result.kinds("placement")[0]["instances"]["where"] == [0, 1], result.describe()
    first, last = instances(result)
    assert [(first[i]["core"], first[i]["instances"], first[i]["registered"]) for i in (0, 1)] == \
        [(0, 2, 1), (1, 2, 1)], result.describe()
    pids = {i: first[i]["pid"] for i in (0, 1)}

    # Before the kill: the nearest instance is the caller's core's; by index, each one.
    for core in (0, 1):
        nearest = answers(result, core, "nearest")[0]
        assert (nearest["instance"], nearest["core"], nearest["pid"]) == (core, core, pids[core]), \
            result.describe()
        by_index = answers(result, core, "index")[:2]
        assert [(a["instance"], a["pid"], a["count"]) for a in by_index] == \
            [(0, pids[0], 2), (1, pids[1], 2)], result.describe()

    # `kill where` from the shell on core 0 ends instance 0; init restarts it alone.
    restarts = result.kinds("server_restart")
    assert [(r["server"], r["instance"], r["instances"], r["old_pid"], r["core"]) for r in restarts] == \
        [("where", 0, 2, pids[0], 0)], result.describe()
    new_pid = restarts[0]["pid"]

    # Instance 1 kept serving (same process, started once); the restarted instance 0
    # registered again and found its kept region (a second start).
    after_core1 = answers(result, 1, "nearest")[1]
    assert (after_core1["instance"], after_core1["pid"], after_core1["starts"]) == (1, pids[1], 1), \
        result.describe()
    after_core0 = answers(result, 0, "nearest")[1]
    assert (after_core0["instance"], after_core0["pid"], after_core0["starts"]) == (0, new_pid, 2), \
        result.describe()
    assert [(last[i]["pid"], last[i]["registered"]) for i in (0, 1)] == \
        [(new_pid, 2), (pids[1], 1)], result.describe()
    # Requests each instance took, across its restarts: every answer its processes gave
    # (instance 1 answered 6 of the questions and the 2 kept-region probes of the client on
    # core 1; the restarted instance 0 those asked after its restart, 3 or 4: the kill may
    # land just after the old process answered one, or while it held one it never answered).
    answered = [a["pid"] for a in result.kinds("where") + result.kinds("where_kept_probe")]
    assert answered.count(pids[1]) == 8 and last[1]["taken"] == 8, result.describe()
    assert answered.count(new_pid) >= 3, result.describe()
    taken_before_restart = last[0]["taken"] - answered.count(new_pid)
    assert taken_before_restart - answered.count(pids[0]) in (0, 1), result.describe()
    assert first[0]["taken"] <= taken_before_restart, result.describe()

    # An instance may map its own kept region (where, where.1) and no other name's.
    probes = result.kinds("where_kept_probe")
    assert len(probes) == 4 and all(p["result"] == 0 for p in probes), result.describe()
    assert all((p["refused"], p["own"]) == (7, -E_BUSY) for p in probes), result.describe()
    assert "kept: pid %d (where) may not map kept region 'fs'" % pids[0] in result.text, \
        result.describe()


def test_a_core_without_an_instance_reaches_the_nearest(tmp_path):
    result = boot_with_placement(tmp_path, "where 2,1\napp 0,1,2\n",
                                 "run where ask @0; run where ask @1; run where ask @2", smp=3)
    assert result.rc == 0, result.describe()
    nearest = {core: answers(result, core, "nearest")[0] for core in (0, 1, 2)}
    # Instance 0 runs on core 2, instance 1 on core 1 (the list's order); core 0 has none,
    # and core 1 is its nearest.
    assert {core: (a["instance"], a["core"]) for core, a in nearest.items()} == \
        {0: (1, 1), 1: (1, 1), 2: (0, 2)}, result.describe()


def test_bad_instance_lists_give_the_parsers_errors_and_the_safe_default(tmp_path):
    result = boot_with_placement(tmp_path, "# instances\nwhere 1,1\npager 0,1\nblk per-core\n",
                                 "placement; servers where; run hello")
    assert "placement: file: line 2: core 1 listed twice for where" in result.text, result.describe()
    assert ("placement: file: line 3: bad value '0,1' for pager (one instance: a core or other-socket)"
            in result.text), result.describe()
    assert "safe default" in result.text, result.describe()
    placement = result.kinds("placement")[0]
    assert placement["warnings"] >= 2 and "where" not in placement["instances"], result.describe()
    assert placement["instances"]["fs"] == [0], result.describe()
    assert "servers: where: not found" in result.text, result.describe()
    assert result.kinds("hello"), result.describe()
    assert result.rc == 1, result.describe()  # `servers where` failed: no such server


MALFORMED_ARGUMENTS = ["2/2", "0/0", "1/65", "x/2", "1", "1/2/3"]


def test_a_malformed_instance_argument_is_refused():
    commands = "; ".join(f"run where --instance {argument}" for argument in MALFORMED_ARGUMENTS)
    result = formica.run("--smp", "1", "--accel", "tcg", "--cmd", commands, timeout=TIMEOUT)
    for argument in MALFORMED_ARGUMENTS:
        assert f"bad --instance '{argument}' (expected I/N, I < N <= 64)" in result.text, result.describe()
    assert result.text.count("where exited with code 2") == len(MALFORMED_ARGUMENTS), result.describe()
