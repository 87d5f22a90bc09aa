# The kernel's memory report (SYS_MEMORY_REPORT, syscall 60; docs/userland.md "Memory"): the
# shell's `free` and `memreport` (tests/programs/memreport) see a total near QEMU's -m size, free
# memory that drops while a program holds memory and comes back after it exits, an available
# amount within the account's quota that drops with what the account maps, and -E_FAULT for
# every bad buffer.
import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

MIB = 1 << 20
GUEST_MIB = 256
GROWN = 8 * MIB
QUOTA = 16 * MIB
SLACK = 1 * MIB  # page tables, the shell's own heap and a program's stacks come and go


def test_free_total_free_available_and_an_account():
    # an ended program's frames are freed a moment after `run` returns: look a few times
    commands = (f"free; run --memory {QUOTA} memreport grow {GROWN} @1; sleep 200; free; "
                "sleep 1000; free; sleep 3000; free; run memreport fault @1")
    result = formica.run("--smp", "2", "--mem", f"{GUEST_MIB}M", "--cmd", commands, timeout=120)
    assert result.rc == 0, result.describe()
    before, *afters = result.kinds("memory")
    after = max(afters, key=lambda report: report["free"])
    assert any(line.startswith("memory: total ") and " available " in line
               for line in result.lines), result.describe()
    # total: the frames the allocator manages, a little under -m (the BIOS, the kernel, the
    # modules and the bitmap are not among them)
    assert 0.8 * GUEST_MIB * MIB < before["total"] <= GUEST_MIB * MIB, before
    assert before["available"] < before["free"] < before["total"], before
    # the shell's account has no quota: available is free less the kernel's reserve
    reserve = max(before["total"] // 64, MIB)
    assert before["available"] == before["free"] - reserve, before
    seen = {line["when"]: line for line in result.kinds("memory_seen")}
    assert seen["before"]["total"] == before["total"], seen
    assert seen["before"]["available"] <= QUOTA, seen
    # growing the heap by 8 MiB takes 8 MiB of frames and of the account's quota
    assert seen["before"]["free"] - seen["after"]["free"] >= GROWN, seen
    assert seen["after"]["available"] <= QUOTA - GROWN, seen
    # ... which come back when the program has ended
    assert after["free"] >= before["free"] - SLACK, (before, after)
    assert after["free"] >= seen["after"]["free"] + GROWN, (seen, after)
    faults = result.kinds("memory_faults")
    assert faults == [{"kind": "memory_faults", "all_refused": True}], result.describe()


def test_total_follows_the_machine():
    result = formica.run("--smp", "1", "--mem", "128M", "--cmd", "free", timeout=60)
    assert result.rc == 0, result.describe()
    (report,) = result.kinds("memory")
    assert 0.8 * 128 * MIB < report["total"] <= 128 * MIB, report
