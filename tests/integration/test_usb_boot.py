# The bare-metal recipe of docs/boot.md, as far as it can be tried here: build/write-usb
# writes the ISO to a file exactly as it writes to a stick (the same dd), and QEMU boots
# that file as a USB mass-storage stick behind xHCI under SeaBIOS and under OVMF, where the
# demo's commands show on the framebuffer console (the screen, read back by screen.py). Also
# the script's refusals: targets that are not a whole removable/USB disk.
import subprocess

import pytest

import formica
import screen

WRITE_USB = formica.REPO_ROOT / "build" / "write-usb"
USB_TIMEOUT = 90
UEFI_USB_TIMEOUT = 120


def write_usb(*arguments):
    return subprocess.run([str(WRITE_USB), *arguments], stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def stick(tmp_path):
    """A file written by build/write-usb as a stick would be."""
    image = tmp_path / "stick.img"
    written = write_usb(str(image))
    assert written.returncode == 0, written.stdout + written.stderr
    assert "read back and compared" in written.stdout
    assert image.read_bytes() == (formica.OUT_DIR / "formica.iso").read_bytes()
    return image


def assert_booted(result):
    assert result.rc == 0, result.describe()
    cores = result.kinds("cores")
    assert len(cores) == 1 and cores[0]["online"] == 2, result.describe()


@pytest.mark.usefixtures("built")
def test_usb_stick_boots_under_seabios(stick):
    result = formica.run("--boot", "usb", "--usb-image", str(stick), "--smp", "2",
                         "--accel", "tcg", timeout=USB_TIMEOUT)
    assert_booted(result)


@pytest.mark.usefixtures("built")
def test_usb_stick_boots_under_uefi_and_shows_the_demo_on_the_screen(stick, tmp_path):
    png = tmp_path / "screen.png"
    result = formica.run("--boot", "usb-uefi", "--usb-image", str(stick), "--smp", "2",
                         "--accel", "tcg", "--cmd", "cores; run hello @1",
                         "--screenshot", str(png), timeout=UEFI_USB_TIMEOUT)
    assert_booted(result)
    assert any("USB" in line and "Boot" in line for line in result.lines), result.describe()
    shown = screen.Screen(png)
    for text in ("formica> cores", "formica> run hello @1", "hello exited with code 0",
                 "formica: powering off (status 0)"):
        row = next((row for row, line in enumerate(shown.lines) if line == text), None)
        assert shown.row_shows(row, text), f"{text!r} is not on the screen:\n{shown.text()}"
    assert any(line.startswith('@json {"kind":"core","id":1,') for line in shown.lines), \
        shown.text()


@pytest.mark.parametrize("target", ["/dev/null", "/tmp"])
def test_write_usb_refuses_what_is_not_a_disk_or_file(target):
    refused = write_usb("--yes", target)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "neither a block device nor a regular file" in refused.stderr


def fixed_disk():
    """A whole disk of this machine that is neither removable nor on USB, or None."""
    listed = subprocess.run(["lsblk", "-dnpo", "NAME,TYPE,RM,TRAN"], capture_output=True,
                            text=True)
    for line in listed.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] == "disk" and fields[2] == "0":
            return fields[0]
    return None


def test_write_usb_refuses_a_fixed_disk():
    """--check-only never writes, whatever the checks decide."""
    disk = fixed_disk()
    if disk is None:
        pytest.skip("no fixed (non-removable, non-USB) disk on this machine to be refused")
    refused = write_usb("--check-only", disk)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "neither removable nor on USB" in refused.stderr


def test_write_usb_needs_the_iso(tmp_path):
    refused = write_usb("--iso", str(tmp_path / "missing.iso"), str(tmp_path / "stick.img"))
    assert refused.returncode == 1
    assert "missing" in refused.stderr
    assert not (tmp_path / "stick.img").exists()
