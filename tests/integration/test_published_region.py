# The published region (syscall 65, formica/published_region.h, docs/design.md "Server instances"):
# `icatest published` prints one @json case per check (refusals, size limits, the owner's writable
# mapping, a reader's read-only one, the region kept for the next owner while a reader holds it and
# freed with its last holder), and ICA_KEEP_SENDER refused between servers of different names;
# every case must be ok.
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
