# test_pager_vs_linux_report.py: the comparison report's "What stands in the way" section
# (build/bench/pager_vs_linux.py) computed from rows of known figures, on the host: the
# per-swap-in time, the wait for the backend, Linux's per page-in and the 10x goal's budget.
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "build"))
sys.path.insert(0, str(REPO / "build" / "bench"))
import pager_vs_linux  # noqa: E402


def row(**changes):
    """A tcg row of round figures: 10,000 swap-ins in 3.1 s of which 1 s waiting, 0.1 s
    unlimited; Linux 20 s on its disk (20,000 page-ins, 1 s unlimited) and 30 s on zram."""
    base = {"kind": "pager_vs_linux", "series": "tcg", "backend": "node", "working_set_ratio": 4,
            "records": 20000, "seed": 1, "working_set_bytes": 2 << 20, "local_bytes": 512 << 10,
            "block_bytes": 4096, "formica_us": 3_100_000, "formica_no_limit_us": 100_000,
            "formica_swap_ins": 10_000, "formica_swap_in_bytes": 10_000 * 4096,
            "formica_swap_out_bytes": 0, "formica_fetch_wait_us": 1_000_000,
            "formica_readahead_fetches": 50, "formica_readahead_unused": 5,
            "linux_disk_swap_us": 20_000_000, "linux_disk_swap_pswpin": 20_000,
            "linux_disk_swap_pswpout": 100, "linux_zram_us": 30_000_000, "linux_zram_pswpin": 20_000,
            "linux_zram_pswpout": 100, "linux_no_limit_us": 1_000_000}
    base.update(changes)
    return base


def test_obstacle_figures_are_per_swap_in():
    figures = pager_vs_linux.obstacle_row(row())
    assert figures["per_swap_in"] == 300  # (3.1 s - 0.1 s) / 10,000
    assert figures["wait"] == 100
    assert figures["linux_disk"] == 950  # (20 s - 1 s) / 20,000
    assert figures["count_ratio"] == 0.5
    assert figures["bytes_ratio"] == 0.5
    assert figures["budget"] == 190  # (20 s / 10 - 0.1 s) / 10,000
    assert figures["free_backend_us"] == 2_100_000


def test_report_says_what_the_goal_leaves_and_where_the_time_goes():
    text = pager_vs_linux.markdown([row()], False, "test")
    assert "### What stands in the way (tcg)" in text
    assert "| node | 4 | 10,000 | 300 | 100 | 200 | 950 | 1,450 | 0.50 | 0.50 | 190 |" in text
    assert "the goal leaves 190 µs per swap-in; Formica spends 300" in text
    assert "fault path alone is over the budget" in text  # 200 µs of path against 190
    assert "(not met)" not in text  # 300 µs is under the 2,990 that beating zram leaves


def test_report_with_a_missing_figure_says_it_cannot_judge():
    text = pager_vs_linux.markdown([row(formica_us=None)], False, "test")
    assert "cannot be judged" in text


def test_formica_rows_carry_the_pagers_wait_and_read_ahead():
    jsons = [{"kind": "pager", "bytes_in": 8192, "bytes_out": 0, "fetch_wait_us": 7,
              "readahead_fetches": 3, "readahead_unused": 1},
             {"kind": "sort", "local_limit_bytes": 4096, "elapsed_us": 10, "verified": True}]
    sort = pager_vs_linux.formica_rows(jsons, "node")[4096]
    assert (sort["fetch_wait_us"], sort["readahead_fetches"], sort["readahead_unused"]) == (7, 3, 1)
