# DK's drivers against host-made disk images: virtio-blk, AHCI on pc and q35's
# built-in AHCI, NVMe on pc and q35. The self-test's CRC-32 of the first 2048 sectors must equal
# the host's, its pattern must be in the image file afterwards, and requests
# beyond the end must fail (-E_INVALID before the device, -E_IO from it).
import random
import re
import zlib

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 120
SECTOR = 512
E_INVALID = -1
E_IO = -20
SETUPS = {
    "virtio-pc": ([], "virtio-blk"),
    "ahci-pc": (["--disk-bus", "ahci"], "ahci"),
    "ahci-q35": (["--machine", "q35", "--disk-bus", "ahci"], "ahci"),
    "virtio-q35": (["--machine", "q35"], "virtio-blk"),
    "nvme-pc": (["--disk-bus", "nvme"], "nvme"),
    "nvme-q35": (["--machine", "q35", "--disk-bus", "nvme"], "nvme"),
}


def make_image(path, mib=8, seed=7):
    data = random.Random(seed).randbytes(mib << 20)
    path.write_bytes(data)
    return data


def pattern(first_lba, sectors):
    return bytes((lba * 31 + offset * 7 + 0x5a) & 0xff
                 for lba in range(first_lba, first_lba + sectors) for offset in range(SECTOR))


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_selftest_matches_the_host(tmp_path, setup):
    flags, driver = SETUPS[setup]
    image = tmp_path / "disk.img"
    data = make_image(image)
    run = formica.run("--smp", "2", "--accel", "tcg", "--disk", str(image), *flags,
                      "--append", "dk=idle", "--cmd", "run --driver dk --selftest",
                      timeout=TIMEOUT)
    assert run.rc == 0, run.describe()
    [check] = run.kinds("dkcheck")
    assert check["driver"] == driver, run.describe()
    assert check["sectors"] == len(data) // SECTOR
    assert check["sectors_read"] == 2048
    assert int(check["crc32"], 16) == zlib.crc32(data[:2048 * SECTOR]), run.describe()
    assert check["beyond_end"] == E_INVALID
    assert check["device_error"] == E_IO
    assert check["flush"] == 0
    # QEMU's AHCI may finish a command inside the very register write that starts it, so
    # the driver can find every command done without waiting for an interrupt; virtio-blk
    # and NVMe complete asynchronously and must have been woken by their interrupt.
    if driver in ("virtio-blk", "nvme"):
        assert check["interrupts"] >= 1, run.describe()
    first, count = check["pattern_lba"], check["pattern_sectors"]
    on_disk = image.read_bytes()[first * SECTOR:(first + count) * SECTOR]
    assert on_disk == pattern(first, count), "the pattern did not reach the image file"


def test_selftest_on_a_pkernel_core(tmp_path):
    image = tmp_path / "disk.img"
    data = make_image(image, mib=4, seed=3)
    run = formica.run("--smp", "2", "--accel", "tcg", "--disk", str(image), "--append", "dk=idle",
                      "--cmd", "run --driver dk --selftest 512 @1", timeout=TIMEOUT)
    assert run.rc == 0, run.describe()
    [check] = run.kinds("dkcheck")
    assert int(check["crc32"], 16) == zlib.crc32(data[:512 * SECTOR])


@pytest.mark.parametrize("bus, expected", [("virtio", "dk: virtio-blk disk of 16384 sectors"),
                                           ("ahci", "dk: AHCI port 0 disk of 16384 sectors"),
                                           ("nvme", "dk: NVMe namespace 1 disk of 16384 sectors")])
def test_boot_dk_announces_the_disk(tmp_path, bus, expected):
    image = tmp_path / "disk.img"
    make_image(image)
    run = formica.run("--smp", "2", "--accel", "tcg", "--disk", str(image), "--disk-bus", bus,
                      "--cmd", "ps", timeout=TIMEOUT)
    assert run.rc == 0, run.describe()
    assert expected in run.text, run.describe()
    if bus == "virtio":  # its own MSI-X vector, not the INTx line a card may share
        assert re.search(r"dk: virtio-blk at 00:0[0-9a-f]\.0: msi-x interrupts", run.text), \
            run.describe()


@pytest.mark.parametrize("bus", ["virtio", "nvme"])  # the claim: each one's MSI-X vector
def test_second_driver_cannot_take_an_owned_disk(tmp_path, bus):
    image = tmp_path / "disk.img"
    make_image(image, mib=1)
    run = formica.run("--smp", "2", "--accel", "tcg", "--disk", str(image), "--disk-bus", bus,
                      "--cmd", "run --driver dk --selftest", timeout=TIMEOUT)
    assert "resource busy" in run.text, run.describe()
    assert run.rc != 0
