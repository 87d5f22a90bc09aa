# libflmalloc without far memory (docs/files.md, "libflmalloc"): an unchanged program of malloc,
# calloc, realloc and free linked with FLMALLOC's --wrap (flmwrap, build/user.mk) goes through
# flmalloc, whose statistics count its blocks, a 12 MiB one included, under a local limit of 80 %
# of its account's available memory; the same program unwrapped (flmplain) leaves flmalloc
# untouched; and bad requests are refused with NULL or left alone (flmtest refuse).
import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

MIB = 1 << 20
QUOTA = 64 * MIB
BIG_MIB = 12  # over the 10 MiB rule: local only because it fits the limit


def stats_of(result):
    (stats,) = result.kinds("flmalloc")
    return stats


def test_a_wrapped_program_goes_through_flmalloc():
    result = formica.run("--smp", "2", "--mem", "256M", "--cmd",
                         f"run --memory {QUOTA} flmwrap {BIG_MIB} @1", timeout=60)
    assert result.rc == 0, result.describe()
    assert result.kinds("flmwrap") == [{"kind": "flmwrap", "ok": True,
                                        "big_bytes": BIG_MIB * MIB}], result.describe()
    stats = stats_of(result)
    # set up at its first malloc: 80 % of what its account had left (a little under 64 MiB)
    assert 0.75 * QUOTA < stats["local_limit"] <= 0.8 * QUOTA, stats
    # malloc, calloc, realloc's new block and the big one, each counted; all freed
    assert stats["local_allocations"] >= 4, stats
    assert stats["local_peak"] >= BIG_MIB * MIB, stats
    assert stats["local_bytes"] == 0, stats
    assert stats["far_allocations"] == 0 and stats["far_files"] == 0, stats
    assert stats["failures"] == 0, stats


def test_the_same_program_unwrapped_leaves_flmalloc_alone():
    result = formica.run("--smp", "2", "--mem", "256M", "--cmd",
                         f"run --memory {QUOTA} flmplain {BIG_MIB} @1", timeout=60)
    assert result.rc == 0, result.describe()
    assert result.kinds("flmwrap")[0]["ok"] is True, result.describe()
    stats = stats_of(result)
    assert stats["local_allocations"] == 0 and stats["local_peak"] == 0, stats


def test_bad_requests_are_refused():
    result = formica.run("--smp", "2", "--cmd", "run flmtest refuse @1", timeout=60)
    assert result.rc == 0, result.describe()
    checks = {line["check"]: line["ok"] for line in result.kinds("flmtest")}
    assert checks == {"calloc_overflow": True, "malloc_too_large": True,
                      "realloc_foreign": True, "free_unaligned": True,
                      "failures_counted": True, "nothing_held": True}, result.describe()
    assert any("not a block flmalloc handed out; left alone" in line
               for line in result.lines), result.describe()
    assert any("bytes refused: count times size overflows" in line
               for line in result.lines), result.describe()


def test_a_program_in_the_flm_dialect():
    # tests/programs/flmarray/main.flm, translated at build time by build/flm_translate.py: its
    # 24 MiB file-scope array (past the 10 MiB rule, within a 96 MiB account's limit) and a
    # block's array come from flmalloc, zeroed, and hold what the program computes
    result = formica.run("--smp", "2", "--cmd", "run --memory 96M flmarray @1", timeout=60)
    assert result.rc == 0, result.describe()
    assert result.kinds("flmarray") == [{"kind": "flmarray", "zeroed": True, "summed": True,
                                         "sized": True, "whole": True}], result.describe()
    stats = stats_of(result)
    assert stats["local_allocations"] == 2, stats
    assert stats["local_peak"] >= 2048 * 1536 * 8 + 2048 * 8, stats
    assert stats["failures"] == 0, stats
