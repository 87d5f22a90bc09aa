# Process tests: spawn on a chosen core, servers on their placement cores, user faults that
# end only the faulting process, bad system-call arguments refused, cross-core notification
# ping-pong, and the shell's exit status. Each boots Formica with --cmd under TCG.
import re

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 90
FAILED_RUN = 1  # the runner's status when a command failed (not 124, a timeout)
PROMPT = "formica> "

# Fault kind -> what the kernel's report on the faulting process must name.
FAULT_CAUSES = {
    "null": r"page fault|#PF\b|vector 14\b",
    "privileged": r"general protection|#GP\b|vector 13\b",
    "divide": r"divide|#DE\b|vector 0\b",
}
# Fault kind -> the error code the refused system call must return.
# hugememory meets the account's memory quota (-E_QUOTA, docs/authority.md) first.
REFUSED_CALLS = {"badpointer": -2, "kernelpointer": -2, "hugememory": -21}


def run_commands(commands, smp=2, *flags, timeout=TIMEOUT):
    return formica.run("--smp", str(smp), "--accel", "tcg", *flags, "--cmd", commands,
                       timeout=timeout)


def is_report_line(line):
    """False for the shell's echo of a command, its run reports and result lines."""
    return not line.startswith(PROMPT) and "exited with code" not in line and "@json" not in line


def exit_codes(result, program):
    pattern = re.compile(rf"^{re.escape(program)} exited with code (-?\d+)$")
    return [int(match.group(1)) for match in map(pattern.match, result.lines) if match]


def test_hello_runs_on_every_requested_core():
    cores = 16
    commands = "; ".join(f"run hello @{core}" for core in range(cores))
    result = run_commands(commands, cores, timeout=180)
    assert result.rc == 0, result.describe()
    hellos = result.kinds("hello")
    assert len(hellos) == cores, result.describe()
    for core, hello in enumerate(hellos):
        assert hello.get("core") == core, f"hello {core}: {hello}\n{result.describe()}"
    assert len({hello.get("pid") for hello in hellos}) == cores, "pids repeat\n" + result.describe()
    assert exit_codes(result, "hello") == [0] * cores, result.describe()


def test_hello_gets_its_arguments_and_defaults_to_the_shell_core():
    result = run_commands("run hello alpha beta  gamma")
    assert result.rc == 0, result.describe()
    hellos = result.kinds("hello")
    assert len(hellos) == 1, result.describe()
    assert hellos[0].get("args") == "alpha beta gamma", result.describe()
    assert hellos[0].get("core") == 0, result.describe()


def processes_by_name(result):
    return {process["name"]: process for process in result.kinds("process")}


def test_placement_5_puts_servers_on_their_cores():
    result = run_commands("cores; ps; placement", 4, "--placement", "5")
    assert result.rc == 0, result.describe()
    placements = result.kinds("placement")
    assert len(placements) == 1, result.describe()
    placement = placements[0]
    assert placement.get("name") == "5", result.describe()
    assert (placement.get("fs"), placement.get("blk"), placement.get("dk")) == (1, 2, 0), \
        result.describe()
    processes = processes_by_name(result)
    for server in ("fs", "blk", "dk", "pager"):
        assert server in processes, f"no {server} process\n{result.describe()}"
        assert processes[server]["priority"] == "server", result.describe()
        assert processes[server]["core"] == placement[server], result.describe()
        assert processes[server]["state"] in ("ready", "running", "waiting"), result.describe()
    for program in ("init", "shell"):
        assert processes[program]["core"] == 0, result.describe()
        assert processes[program]["priority"] == "application", result.describe()
    assert processes["init"]["pid"] == 1, result.describe()
    assert processes["shell"]["state"] == "running", result.describe()


def test_cores_agree_with_ps():
    result = run_commands("cores; ps", 4, "--placement", "5")
    assert result.rc == 0, result.describe()
    cores = result.kinds("core")
    assert [core.get("id") for core in cores] == [0, 1, 2, 3], result.describe()
    assert [core.get("kernel") for core in cores] == ["m", "p", "p", "p"], result.describe()
    assert all(isinstance(core.get("apic"), int) for core in cores), result.describe()
    by_pid = {process["pid"]: process for process in result.kinds("process")}
    listed = set()
    for core in cores:
        for entry in core["procs"]:
            process = by_pid.get(entry["pid"])
            assert process is not None, f"core {core['id']} lists {entry}\n{result.describe()}"
            assert process["name"] == entry["name"], result.describe()
            assert process["core"] == core["id"], result.describe()
            listed.add(entry["pid"])
    living = {pid for pid, process in by_pid.items() if process["state"] != "zombie"}
    assert living <= listed, f"ps shows {living - listed} on no core\n{result.describe()}"


def test_cycle_accounting():
    """ps's cpu_cycles grow while a process runs and stay put while it waits; cores's
    idle_cycles count the halted time of a core with nothing to run."""
    result = run_commands("ps; run hello; ps; run hello; ps; cores; cores", 2)
    assert result.rc == 0, result.describe()
    snapshots = [p for p in result.kinds("process") if p["name"] in ("shell", "init")]
    shell = [p["cpu_cycles"] for p in snapshots if p["name"] == "shell"]
    init = [p for p in snapshots if p["name"] == "init"]
    assert len(shell) == 3 and len(init) == 3, result.describe()
    assert shell[0] < shell[1] < shell[2], "the shell ran between the ps (it waited for hello)"
    # On a loaded host init may still be between spawning the shell and its
    # wait at the first ps; from the first snapshot that shows it waiting on,
    # its cycles must not move.
    waiting = [p["cpu_cycles"] for p in init if p["state"] == "waiting"]
    assert len(waiting) >= 2 and init[-1]["state"] == "waiting", result.describe()
    assert waiting[0] > 0 and len(set(waiting)) == 1, "init waited for the shell the whole time"
    idle_core = [c["idle_cycles"] for c in result.kinds("core") if c["id"] == 1]
    assert len(idle_core) == 2 and 0 < idle_core[0] <= idle_core[1], result.describe()


@pytest.mark.parametrize("kind", sorted(FAULT_CAUSES))
def test_user_fault_ends_only_that_process(kind):
    result = run_commands(f"run fault {kind}; run hello after")
    assert result.rc == FAILED_RUN, result.describe()
    assert not any("PANIC" in line for line in result.lines), result.describe()
    reports = [index for index, line in enumerate(result.lines)
               if is_report_line(line) and re.search(FAULT_CAUSES[kind], line, re.IGNORECASE)]
    assert reports, f"no kernel report naming the fault\n{result.describe()}"
    codes = exit_codes(result, "fault")
    assert len(codes) == 1 and codes[0] != 0, result.describe()
    hello_lines = [index for index, line in enumerate(result.lines) if '"kind":"hello"' in line]
    assert hello_lines and hello_lines[0] > reports[0], \
        f"the command after the fault did not run\n{result.describe()}"
    assert exit_codes(result, "hello") == [0], result.describe()


@pytest.mark.parametrize("kind", sorted(REFUSED_CALLS))
def test_bad_system_call_arguments_are_refused(kind):
    result = run_commands(f"run fault {kind}")
    assert result.rc == 0, result.describe()
    faults = result.kinds("fault")
    assert faults == [{"kind": "fault", "case": kind, "result": REFUSED_CALLS[kind]}], \
        result.describe()


def test_exit_code_reaches_the_shell():
    result = run_commands("run fault exit 3; run fault exit 0")
    assert result.rc == FAILED_RUN, result.describe()
    assert exit_codes(result, "fault") == [3, 0], result.describe()


def test_cross_core_pingpong_completes():
    result = run_commands("run pingpong 1000 0 1", timeout=180)
    assert result.rc == 0, result.describe()
    results = result.kinds("pingpong")
    assert len(results) == 1, result.describe()
    pingpong = results[0]
    assert pingpong.get("rounds") == 1000, result.describe()
    assert pingpong.get("cores") == [0, 1], result.describe()
    assert pingpong.get("ok") is True, result.describe()
    assert pingpong.get("cycles_per_round", 0) > 0, result.describe()


def test_unknown_command_fails_the_run_but_later_commands_run():
    result = run_commands("frobnicate; run hello")
    assert result.rc == FAILED_RUN, result.describe()
    assert any("frobnicate" in line for line in result.lines if is_report_line(line)), \
        f"no error message for the unknown command\n{result.describe()}"
    assert len(result.kinds("hello")) == 1, result.describe()


def test_spawn_on_a_missing_core_fails():
    result = run_commands("run hello @7")
    assert result.rc == FAILED_RUN, result.describe()
    assert result.kinds("hello") == [], result.describe()


def test_missing_program_fails():
    result = run_commands("run nosuchprogram")
    assert result.rc == FAILED_RUN, result.describe()
    assert "not found" in result.text, result.describe()
