# ICA communication tests (issue 4, docs/ica.md): the two-stage stress test with 64 clients on
# 16 cores, smaller same-core and cross-core chains with async collects, and every bad input
# of `icatest bad`, each @json case asserted ok. Each boots Formica with --cmd under TCG.
import shutil

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

BAD_CASES_AT_LEAST = 40  # `icatest bad` prints one line per case; fewer means some did not run


def icatest(arguments, smp, timeout):
    result = formica.run("--smp", str(smp), "--accel", "tcg", "--cmd", f"run --server icatest {arguments}",
                         timeout=timeout)
    assert result.rc == 0, result.describe()
    assert not any("PANIC" in line for line in result.lines), result.describe()
    return result


def stress_summary(result, clients, requests):
    summaries = [case for case in result.kinds("icatest") if case.get("case") == "stress"]
    assert len(summaries) == 1, result.describe()
    summary = summaries[0]
    assert summary["ok"] is True, summary
    assert summary["failures"] == 0, summary
    assert summary["requests"] >= clients * requests, summary
    assert summary["servers_stopped"] is True, summary
    assert summary["control_free"][0] == summary["control_free"][1], f"control ICAs leaked: {summary}"
    assert summary["data_free"][0] == summary["data_free"][1], f"data ICAs leaked: {summary}"
    return summary


def test_stress_64_clients_on_16_cores_10000_requests_each():
    result = icatest("stress 64 10000 16", smp=16, timeout=900)
    summary = stress_summary(result, 64, 10000)
    assert summary["ipis"] > 0, summary  # clients on other cores than the servers wait for IPIs


def test_stress_small_cross_core_chain():
    result = icatest("stress 8 500 3", smp=3, timeout=180)
    stress_summary(result, 8, 500)


def test_stress_same_core_chain_needs_no_ipi():
    result = icatest("stress 4 500 1", smp=2, timeout=180)
    summary = stress_summary(result, 4, 500)
    assert summary["ipis"] == 0, summary


def test_lend_is_read_only_ends_at_next_handover_and_lends_on():
    """icatest lend (lend.c), then its lend-on cases (lend_on.c): a borrowed block ICA lent on
    reads the same, read-only; lent on back to its holder or to its borrower, it stays theirs
    after that lend ends; the lend count seen by lender and borrower; a lend-on refused where
    the block is not borrowed (-E_PERMISSION) or its lender ended (-E_SERVER_ENDED); the block
    freed when its last lend ends."""
    result = icatest("lend", smp=2, timeout=180)
    cases = {case["case"]: case for case in result.kinds("icatest")}
    for needed in ("lend_read", "lend_again", "lend_is_read_only", "lend_ends_at_next_handover",
                   "lender_rules", "lend_before_lender_ends", "lend_orphan_ends_at_next_handover",
                   "lend_on_start", "lend_on_read", "lend_on_is_read_only", "lend_on_to_its_lender",
                   "lend_on_back_to_the_middle",
                   "lend_on_count", "lend_on_not_borrowed", "lend_on_lender_frees", "lend_on_stop_servers",
                   "lend_on_after_lender_ends", "lend_on_outlives_the_middle", "lend_no_leak"):
        assert needed in cases and cases[needed]["ok"] is True, result.describe()


def test_the_kernel_writes_the_routing_whatever_the_holder_scribbled():
    result = icatest("route", smp=2, timeout=120)
    cases = result.kinds("icatest")
    failed = [case for case in cases if case.get("ok") is not True]
    assert not failed, f"failed cases: {failed}\n{result.describe()}"
    names = {case["case"] for case in cases}
    for where in ("same_core", "cross_core"):
        for route in ("one_stage", "back_through_first", "direct_return"):
            assert f"route_{route}_{where}" in names, result.describe()


def test_every_bad_input_gets_its_defined_answer():
    result = icatest("bad", smp=2, timeout=180)
    cases = result.kinds("icatest")
    assert len(cases) >= BAD_CASES_AT_LEAST, result.describe()
    failed = [case for case in cases if case.get("ok") is not True]
    assert not failed, f"failed cases: {failed}\n{result.describe()}"
    names = {case["case"] for case in cases}
    for needed in ("forged_generation", "stale_id_request", "held_by_other_process", "no_such_server",
                   "exited_server", "pending_returned_not_found", "malformed_magic",
                   "malformed_data_count", "ring_full_error", "ring_full_ica_still_held",
                   "ring_share_full_after", "ring_full_sender_waits", "ring_wait_ends_with_the_server",
                   "ring_full_timed_forward_busy",
                   "undrained_results_server_serves_others", "allocation_limit_error",
                   "isolation_control_gone_after_handover", "isolation_data_gone_after_handover",
                   "isolation_other_process_data", "no_leak_control", "return_ended_requester",
                   "return_ended_ica_gone",
                   "return_receive_not_received", "forward_receive_not_received",
                   "forward_receive_no_such_server", "return_receive_stale_id",
                   "combined_refusals_ica_still_held"):
        assert needed in names, f"case {needed} missing\n{result.describe()}"


def test_ipcbench_runs_every_case():
    result = formica.run("--smp", "3", "--accel", "tcg", "--cmd", "run --server ipcbench --requests 100",
                         timeout=120)
    assert result.rc == 0, result.describe()
    cases = {(case["case"], case["placement"], case["bytes"]) for case in result.kinds("ipcbench")}
    assert len(cases) == 20, result.describe()  # 17 + kernel_copy at 3 sizes
    forms = {placement for case, placement, _ in cases if case == "fs_blk_direct"}
    assert forms == {"#1", "#2", "#3", "#4", "#5"}, result.describe()


def cross_core_null_request(*append):
    """ipcbench's cross-core null request under --icount (the guest runs the same every time)."""
    result = formica.run("--smp", "3", "--icount", "--cpu", "max,-erms,-fsrm", *append, "--cmd",
                         "run --server ipcbench --requests 100 --only null", timeout=180)
    assert result.rc == 0, result.describe()
    cross = [case for case in result.kinds("ipcbench") if case["placement"] == "cross-core"]
    assert len(cross) == 1, result.describe()
    return cross[0]


def test_cross_core_receivers_poll_instead_of_being_interrupted():
    """A server on its own otherwise idle core polls for its next request, and a requester
    polls for its result (kernel/ica/ica_poll.c): a request or result that comes within the poll's
    bound needs no wake message and no IPI. With the poll turned off (ica_poll_us=0) every
    wait halts, and a cross-core null request costs 2 IPIs again."""
    assert cross_core_null_request()["ipis_per_request"] < 1
    assert cross_core_null_request("--append", "ica_poll_us=0")["ipis_per_request"] >= 1


def test_ipcbench_without_the_server_right_fails_with_the_reason():
    """Without --server ipcbench cannot start its servers: it must say why and fail the run,
    never print a line per case and exit 0."""
    result = formica.run("--smp", "2", "--accel", "tcg", "--disk", "none", "--cmd",
                         "run ipcbench --requests 100 --only null", timeout=120)
    assert result.rc != 0, result.describe()
    assert "ipcbench: needs the server-priority right: run --server ipcbench" in result.text, \
        result.describe()
    assert "ipcbench exited with code 2" in result.text, result.describe()
    assert not result.kinds("ipcbench"), result.describe()


def test_wake_handled_while_still_running_is_not_lost(tmp_path):
    """A server that waits for its own synchronous call's result can take a request's wake in the
    poll before it blocks (FS and BLK on C1, Bonnie on C0: placement #4, with updates). That
    wake must not be dropped: FS would sleep through BLK's result. ica_wait_delay widens the
    window so the old code hung on the first file write, every time."""
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    result = formica.run("--smp", "2", "--accel", "tcg", "--placement", "4", "--disk", str(disk),
                         "--append", "ica_wait_delay=100000",
                         "--cmd", "run bonnie -p 4 -m readblock -u 50 -n 600 -f /race.dat",
                         timeout=120)
    assert result.rc == 0, result.describe()
    children = result.kinds("bonnie_child")
    assert len(children) == 4, result.describe()
    assert all(child["mismatches"] == 0 and child["error"] == 0 for child in children)


def test_wakes_through_a_polling_core_lose_nothing(tmp_path):
    """At placement #2 (Bonnie and BLK on C0, FS on C1) FS's forward wakes BLK on a core where
    Bonnie polls for its result: the wake goes into the polling requester's polled_result word
    (the request's own requester) or C0's poll_woken word (another Bonnie) instead of a message,
    and Bonnie's kernel takes BLK's request and switches straight to BLK (kernel/ica/ica_across.c,
    ica_poll.c, ica_fastpath.c). With three processes, updates and the widened wait window
    (ica_wait_delay) a lost wake would hang the run and a request taken twice or never would
    show as a mismatch or an error."""
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    result = formica.run("--smp", "2", "--accel", "tcg", "--placement", "2", "--disk", str(disk),
                         "--append", "ica_wait_delay=100000",
                         "--cmd", "run bonnie -p 3 -m readblock -u 30 -n 800 -f /race.dat; "
                         "run bonnie -p 1 -m readbyte -u 30 -n 800 -f /race2.dat",
                         timeout=180)
    assert result.rc == 0, result.describe()
    children = result.kinds("bonnie_child")
    assert len(children) == 4, result.describe()
    assert all(child["mismatches"] == 0 and child["error"] == 0 for child in children), \
        result.describe()
    assert "stale ICA" not in result.text, result.describe()



HAMMER_MS = 20000  # outlasts the eight kills (asserted) even on a loaded host
PASTE_DELAY_CYCLES = 50000000  # a few milliseconds: a kill and the server's end fit inside


def test_a_server_killed_on_its_own_core_while_senders_on_others_paste_into_it(tmp_path):
    """The where server alone on C2, killed and crashed eight times while a client on C0 and one
    on C1 keep sending to it (`where hammer`). Their kernels paste each request straight into the
    server, polling or parked in its receive, and ica_paste_delay holds every paste into the parked
    server open for a few milliseconds after its checks, just before it writes the server's page
    tables, so the kills land inside. The server's end must wait out the paste's claim (docs/ica.md, "Across
    cores"): before it did, the m-kernel tore the address space down under the paste, and the
    request pasted into the dead server was never answered (the client on C1 hung; on C0 the
    m-kernel's core was busy with the paste itself) and its ICA stayed held. Every request comes
    back answered rightly or ended cleanly with its server, and no ICA is left over."""
    placement = tmp_path / "where.conf"
    placement.write_text("where 2\napp 0,1\n")
    hits = ["kill where", "crash where"] * 4
    disruptions = "; ".join(f"sleep 400; {hit}" for hit in hits)
    commands = (f"run where ask @0; stats; start where hammer {HAMMER_MS} @0; "
                f"start where hammer {HAMMER_MS} @1; {disruptions}; wait; run where ask @1; stats")
    result = formica.run("--smp", "3", "--accel", "tcg", "--placement", str(placement),
                         "--disk", "none", "--append", f"ica_paste_delay={PASTE_DELAY_CYCLES}",
                         "--cmd", commands, timeout=600)
    assert result.rc == 0, result.describe()
    restarts = result.kinds("server_restart")
    assert [(line["server"], line["core"]) for line in restarts] == [("where", 2)] * len(hits), \
        result.describe()
    hammers = result.kinds("where_hammer")
    assert sorted(line["caller_core"] for line in hammers) == [0, 1], result.describe()
    for hammer in hammers:
        assert hammer["failed"] == 0 and hammer["wrong"] == 0, hammer
        assert hammer["sent"] == hammer["answered"] + hammer["ended"], hammer
        assert hammer["answered"] > 0 and hammer["ended"] > 0 and hammer["servers"] > 1, hammer
    hammer_at = min(i for i, line in enumerate(result.jsons) if line["kind"] == "where_hammer")
    last_restart_at = max(i for i, line in enumerate(result.jsons)
                          if line["kind"] == "server_restart")
    assert hammer_at > last_restart_at, "the clients ended before the kills: make them longer"
    assert [line["exit_code"] for line in result.kinds("waited")] == [0, 0], result.describe()
    # The window was hit: an ending server found a sender's paste under way and waited for it.
    assert "ending waited out a paste from another core" in result.text, result.describe()
    before, after = result.kinds("stats")
    assert (after["control_icas"], after["data_icas"]) == \
        (before["control_icas"], before["data_icas"]), f"ICAs leaked: {before} {after}"
    assert "stale ICA" not in result.text and "PANIC" not in result.text, result.describe()
