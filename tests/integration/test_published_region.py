# The published region (syscall 65, formica/published_region.h, docs/design.md "Server instances"):
# `icatest published` prints one @json case per check (refusals, size limits, the owner's writable
# mapping, a reader's read-only one, the region kept for the next owner while a reader holds it and
# freed with its last holder), and ICA_KEEP_SENDER refused between servers of different names;
# every case must be ok. And `hostile regions`: an account's share of the region slots and its
# memory limit hold (each mapping is charged), other accounts and a restarted FS still get theirs.
import shutil

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

PUBLISHED_CASES = {
    "published_unregistered_refused", "published_registered", "published_size_zero",
    "published_size_above_maximum", "published_other_name_refused", "published_empty_name",
    "published_owner_maps", "published_owner_writes", "published_mapped_twice",
    "published_other_size", "published_first_owner", "published_freed_with_last_holder",
    "published_frames_back", "published_owner_with_reader", "published_kept_for_next_owner",
    "published_reader_write_faults", "published_request_received",
    "published_keep_sender_other_name", "published_refused_forward_kept", "published_plain_forward",
}


def test_published_region_cases():
    result = formica.run("--smp", "2", "--accel", "tcg", "--cmd", "run --server icatest published",
                         timeout=180)
    assert result.rc == 0, result.describe()
    cases = {case["case"]: case for case in result.kinds("icatest")}
    assert PUBLISHED_CASES <= set(cases), result.describe()
    for name in PUBLISHED_CASES:
        assert cases[name]["ok"] is True, cases[name]
    assert any("published: pid" in line and "not registered" in line for line in result.lines), \
        result.describe()
    assert any("may not forward keeping the sender" in line for line in result.lines), \
        result.describe()


E_QUOTA = -21
ACCOUNT_SHARE = 2  # PUBLISHED_ACCOUNT_REGIONS: a quarter of the 8 slots
MIB = 1 << 20
PAGES_APART = 16  # a child and its parent of one program differ by a few pages (the parent's heap)
HELLO = "Hello from Formica's disk."  # build/disk/hello.txt


def regions(result, prefix):
    """name -> the hostile_region line of each child of `hostile regions PREFIX ...`."""
    return {line["name"]: line for line in result.kinds("hostile_region")
            if line["name"].startswith(prefix)}


def granted(lines):
    return sorted(name for name, line in lines.items() if line["result"] == 0)


def test_published_regions_are_charged_and_shared_out(tmp_path):
    # Ordinary programs, each an account of its own, register server names and map published
    # regions: one with a 16 MiB limit asks for three of 8 MiB (each mapping is charged: the
    # second is refused), then three accounts ask for eight of 1 MiB each (two each, an
    # account's share), while a server started meanwhile still gets its region; a fourth
    # account is refused while slots remain (the ones kept for init's servers), and FS, whose
    # owner and replica (#9) share the "fs" region, restarts with it.
    commands = "; ".join([
        "run --memory 16M --user 2005 hostile regions m 3 8388608",
        "start --user 2001 hostile regions a 8 1048576 /regions.a",
        "run hostile await /regions.a",
        "ps",
        "run --server icatest published",
        "start --user 2002 hostile regions b 8 1048576 /regions.b",
        "run hostile await /regions.b",
        "start --user 2003 hostile regions c 8 1048576 /regions.c",
        "run hostile await /regions.c",
        "run --user 2004 hostile regions d 1 1048576",
        "kill fs", "cat /hello.txt",
    ])
    disk = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", disk)
    result = formica.run("--smp", "2", "--placement", "9", "--disk", str(disk), "--cmd", commands,
                         timeout=400)
    assert result.rc == 0, result.describe()
    memory = regions(result, "m")
    assert sorted(line["result"] for line in memory.values()) == [E_QUOTA, E_QUOTA, 0], memory
    assert any("published: pid" in line and "past its memory limit" in line
               for line in result.lines), result.describe()
    first = regions(result, "a")
    assert len(first) == 8 and len(granted(first)) == ACCOUNT_SHARE, first
    assert all(line["result"] == E_QUOTA for name, line in first.items() if name not in granted(first))
    assert any("published: pid" in line and "an account's share" in line
               for line in result.lines), result.describe()
    # a holder's mapping counts in its memory, as ps shows it: the same program as its parent
    # (within a few pages of its own), plus the region
    processes = {line["pid"]: line for line in result.kinds("process")}
    holders = [processes[first[name]["pid"]] for name in granted(first)]
    parent = processes[holders[0]["parent"]]
    assert all(holder["memory_bytes"] >= parent["memory_bytes"] + MIB - PAGES_APART * 4096
               for holder in holders), \
        ([holder["memory_bytes"] for holder in holders], parent["memory_bytes"])
    cases = result.kinds("icatest")
    assert {case["case"] for case in cases} >= PUBLISHED_CASES, result.describe()
    assert all(case["ok"] for case in cases), [case for case in cases if not case["ok"]]
    for prefix in "bc":
        assert len(granted(regions(result, prefix))) == ACCOUNT_SHARE, regions(result, prefix)
    # three accounts hold six regions, the clients' share: a fourth is refused, though slots
    # are free
    assert regions(result, "d")["d0"]["result"] == E_QUOTA, regions(result, "d")
    assert [line["server"] for line in result.kinds("server_restart")] == ["fs"], result.describe()
    assert HELLO in result.lines[result.lines.index("formica> cat /hello.txt"):], result.describe()
