# Kernel fault tests: a deliberately faulting boot (fault=<name> on the kernel command line)
# must panic, name the cause, and make QEMU exit with failure by itself (not by timeout).
import re

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

FAULT_TIMEOUT = 30
# fault name -> pattern that must appear in the panic report (case-insensitive)
FAULT_CAUSES = {
    "pagefault": r"page fault|#PF\b|vector 14\b",
    "divide": r"divide|#DE\b|vector 0\b",
    "ud": r"invalid opcode|undefined opcode|#UD\b|vector 6\b",
}


@pytest.mark.parametrize("fault", sorted(FAULT_CAUSES))
def test_kernel_fault_panics_and_fails_fast(fault):
    result = formica.run("--smp", "2", "--accel", "tcg", "--append", f"fault={fault}",
                         timeout=FAULT_TIMEOUT)
    assert result.rc != 124, f"the panic did not end QEMU\n{result.describe()}"
    assert result.rc != 0, result.describe()
    assert "did not exit by itself" not in result.stderr, \
        f"QEMU had to be killed after the panic\n{result.describe()}"
    panic_lines = [index for index, line in enumerate(result.lines) if "PANIC" in line]
    assert panic_lines, result.describe()
    # Look for the cause only from the panic on: the kernel may echo its command line earlier.
    panic_report = "\n".join(result.lines[panic_lines[0]:])
    assert re.search(FAULT_CAUSES[fault], panic_report, re.IGNORECASE), \
        f"panic report does not name the cause ({FAULT_CAUSES[fault]})\n{result.describe()}"
