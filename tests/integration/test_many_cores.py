# Many cores: every core of a 255- and 256-core machine comes online, the all-pairs
# inter-core self-test passes, and the inter-core area stays small: at boot only core 0's
# pairs have rings (2(N-1) entries); the self-test connects all N(N-1), with fewer slots per
# entry for large N (docs/intercore.md). On the 256th core (APIC id 255) device interrupts
# are refused with a line saying why. The longer runs (128 cores, 32 rounds at 256) are
# marked many_cores and run by `make test-many-cores` only.
import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

MANY_CORE_TIMEOUT = 400
# 8 rounds: every pair still carries messages in order, and with 8 or 4 slots a ring
# still fills when its reader lags (back-pressure); 32 rounds at 128 cores took 20 s more.
SELFTEST = "selftest=intercore:8"
# Starting 100+ vCPU threads on a busy 2-core host takes longer than the default 5 s.
SLOW_START = ["--append", "ap_timeout_ms=120000"]
POINTER_BYTES = 8
AREA_HEADER_BYTES = 64


def expected_entry_bytes(slots):
    return 128 + slots * 64  # ring header (two cache lines) + one 64-byte message per slot


def check_area(result, cores, slots):
    """The boot's 'intercore' line and the self-test's area size for `cores` cores."""
    table = AREA_HEADER_BYTES + cores * cores * POINTER_BYTES
    boot = result.kinds("intercore")
    assert len(boot) == 1, result.describe()
    assert boot[0]["cores"] == cores and boot[0]["slots"] == slots, result.describe()
    assert boot[0]["entry_bytes"] == expected_entry_bytes(slots), result.describe()
    assert boot[0]["entries"] == 2 * (cores - 1), result.describe()
    assert boot[0]["table_bytes"] == table, result.describe()
    assert boot[0]["bytes"] == table + 2 * (cores - 1) * expected_entry_bytes(slots), result.describe()
    selftest = [item for item in result.kinds("selftest") if item.get("name") == "intercore"]
    assert len(selftest) == 1, result.describe()
    assert selftest[0]["ok"] is True and selftest[0]["cores"] == cores, result.describe()
    assert selftest[0]["messages"] == 8 * cores * (cores - 1), result.describe()
    assert selftest[0]["area_entries"] == cores * (cores - 1), result.describe()
    assert selftest[0]["area_bytes"] == table + cores * (cores - 1) * expected_entry_bytes(slots)


def need_x2apic():
    """256 cores need x2APIC (APIC id 255): a QEMU whose TCG has none (Debian 12's 7.2)
    skips; QEMU 10 refusing it is a failure."""
    complaint = formica.qemu_rejects_x2apic()
    if complaint and formica.qemu_major() >= formica.X2APIC_QEMU_MAJOR:
        pytest.fail(f"QEMU {formica.qemu_major()} refused x2APIC under TCG: {complaint}")
    if complaint:
        pytest.skip(f"this QEMU's TCG has no x2APIC: {complaint}")


def boot_many(cores, *flags, selftest=SELFTEST):
    result = formica.run("--smp", str(cores), "--boot", "kernel", "--accel", "tcg",
                         "--append", selftest, *SLOW_START, *flags,
                         timeout=MANY_CORE_TIMEOUT)
    assert result.rc == 0, result.describe()
    online = result.kinds("cores")
    assert online and online[0]["online"] == cores and online[0]["p"] == cores - 1, result.describe()
    return result


def test_256_cores_selftest_with_x2apic():
    """Also: a driver on core 255 (APIC id 255, past what an MSI or an IOAPIC entry
    can name) is refused both, with a line saying why."""
    need_x2apic()
    result = boot_many(256, "--machine", "q35", "--x2apic", "--mem", "1G",
                       "--cmd", "run --driver devtest high-apic @255")
    assert any(line.startswith("cores: 256 online (x2APIC") for line in result.lines), result.describe()
    check_area(result, 256, slots=4)
    checks = {check["check"]: check for check in result.kinds("devtest")}
    assert checks["msi_high_apic"]["result"] == -1, result.describe()
    assert checks["irq_high_apic"]["result"] == -1, result.describe()
    assert "msi: core 255 (apic id 255) cannot take MSIs without interrupt remapping" in result.text
    assert "irq: core 255 (apic id 255) cannot take device interrupts" in result.text


def test_255_cores_selftest_with_xapic():
    """The most cores xAPIC can address (APIC ids 0-254)."""
    result = boot_many(255, "--mem", "1G", "--append", "nox2apic")
    assert any(line.startswith("cores: 255 online (xAPIC") for line in result.lines), result.describe()
    check_area(result, 255, slots=4)


@pytest.mark.many_cores
def test_128_cores_selftest():
    result = boot_many(128, "--mem", "512M")
    check_area(result, 128, slots=8)


@pytest.mark.many_cores
def test_256_cores_selftest_32_rounds():
    """The default 32 rounds: every ring of 4 slots fills many times over."""
    need_x2apic()
    result = boot_many(256, "--machine", "q35", "--x2apic", "--mem", "1G",
                       selftest="selftest=intercore")
    selftest = [item for item in result.kinds("selftest") if item.get("name") == "intercore"]
    assert selftest and selftest[0]["ok"] is True, result.describe()
    assert selftest[0]["messages"] == 32 * 256 * 255, result.describe()
