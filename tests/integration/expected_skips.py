# expected_skips.py: the one list of integration-test skips CI accepts (.ci/run fails on
# any other skip). Each entry: the test file, the start of the skip's reason, and why a
# machine may lack what it needs. Everything else a test needs, `make test` provides.
from typing import List, NamedTuple


class ExpectedSkip(NamedTuple):
    test_file: str
    reason_start: str
    why: str


EXPECTED_SKIPS = [
    ExpectedSkip("test_kvm.py", "no KVM: ",
                 "CI containers and many hosts have no usable /dev/kvm; the KVM boots need one"),
    ExpectedSkip("test_flmalloc_far.py", "no lib/mmap.c: ",
                 "flmalloc's far path maps files with lib/mmap.c, built on the mmap branch; the "
                 "skip ends by itself when that file is in the tree (then drop this entry)"),
    ExpectedSkip("test_usb_boot.py", "no fixed (non-removable, non-USB) disk",
                 "a container may see no whole disk of its host, so there is nothing to refuse"),
]


def is_expected(test_id, reason):
    """True when a skip of test `test_id` (a pytest node id) with `reason` is declared."""
    file_name = test_id.split("::", 1)[0].rsplit("/", 1)[-1]
    return any(file_name == skip.test_file and reason.startswith(skip.reason_start)
               for skip in EXPECTED_SKIPS)


def unexpected(skips: List[dict]):
    """The skips (`{"test": node id, "reason": text}`) that no entry declares."""
    return [skip for skip in skips if not is_expected(skip["test"], skip["reason"])]
