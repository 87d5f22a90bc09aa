# The list of skips CI accepts (expected_skips.py, checked by .ci/run): a declared skip
# passes, the Linux guest's skip and any other reason are reported. No QEMU.
from expected_skips import EXPECTED_SKIPS, unexpected


def test_a_declared_skip_is_accepted():
    skips = [{"test": "tests/integration/test_kvm.py::test_boots_under_kvm",
              "reason": "no KVM: /dev/kvm is missing or not accessible"}]
    assert unexpected(skips) == []


def test_the_linux_guest_skip_is_not_expected():
    skip = {"test": "tests/integration/test_journal_linux.py::test_exchange",
            "reason": "no Linux guest: run make linux-guest"}
    assert unexpected([skip]) == [skip]


def test_a_declared_reason_in_another_file_is_not_expected():
    skip = {"test": "tests/integration/test_boot.py::test_x", "reason": "no KVM: /dev/kvm is missing"}
    assert unexpected([skip]) == [skip]


def test_every_entry_says_why():
    assert all(entry.why and entry.reason_start for entry in EXPECTED_SKIPS)
