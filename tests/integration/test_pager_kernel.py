# The kernel's remote-paging mechanism, checked with tests/programs/pagertest (a tiny pager that keeps
# two 4 KiB blocks resident): faults in a pager region reach the pager, blocks move between
# the process and data ICAs without a copy, accessed/dirty bits drive clean drops, system calls
# on non-resident pager memory page it in, only the region's pager may map it, and touching
# a released region ends the process with a report.
import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")


def test_pager_region_faults_swaps_and_release():
    result = formica.run("--smp", "2", "--accel", "tcg", "--cmd",
                         "run --server pagertest; run --server pagertest touch-after-release", timeout=90)
    cases = {}
    for entry in result.kinds("pagertest"):
        cases.setdefault(entry["case"], []).append(entry)
    for name in ("region", "contents", "reread", "syscall_on_paged_memory", "map_by_non_pager_refused",
                 "swapped", "clean_drops", "release"):
        assert name in cases and all(entry["ok"] for entry in cases[name]), result.describe()
    assert "killed by page fault" in result.text, result.describe()
    assert "pagertest exited with code 142" in result.text, result.describe()
    assert "PANIC" not in result.text
    assert result.rc == 1, result.describe()  # the second command failed, as it must
