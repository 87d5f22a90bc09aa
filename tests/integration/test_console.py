# A PC's console (docs/console.md): the framebuffer the loader set up, and the PS/2 and USB
# keyboards. The keyboard tests boot under OVMF on a machine with no serial port, so the only
# output is the screen: `ls /` and `run hello` are typed through QEMU's monitor (build/run
# --keys), the screen is saved when the shell's `halt` ends the run (--screenshot), and its
# rows are compared pixel for pixel with the same text drawn on the host with the build's
# font (screen.py). The USB keyboard sits on the xHCI controller of the USB stick that boots.
import shutil

import pytest

import formica
import screen

KEYS = "lx\\bs /\\nrun hello\\nhalt\\n"  # --keys spells Enter \n, Backspace \b
OVMF_TIMEOUT = 420  # OVMF and GRUB under TCG on a loaded 2-core host, then the typing
BIOS_TIMEOUT = 180


@pytest.fixture
def disk(tmp_path):
    copy = tmp_path / "disk.img"
    shutil.copyfile(formica.OUT_DIR / "disk.img", copy)
    return copy


def typed_session(tmp_path, disk, *flags):
    """Boots with `flags`, types KEYS, returns (the run, the screen at its end)."""
    png = tmp_path / "screen.png"
    result = formica.run(*flags, "--no-serial", "--disk", str(disk), "--keys", KEYS,
                         "--screenshot", str(png), "--smp", "2", "--accel", "tcg",
                         timeout=OVMF_TIMEOUT)
    assert png.is_file(), result.describe()
    return result, screen.Screen(png)


def assert_row(shown, text):
    """A row of the screen is `text`, every pixel as the host draws it."""
    row = next((row for row, line in enumerate(shown.lines) if line == text), None)
    assert row is not None, f"no row {text!r} on the screen:\n{shown.text()}"
    assert shown.row_shows(row, text), f"row {row} reads {text!r} but its pixels differ"


def assert_typed_session(result, shown):
    assert result.rc == 0, result.describe() + "\n" + shown.text()
    assert not any(result.lines), "no serial port: the runner must see no console line"
    # The echo of `ls /` may be split by FS's mount lines (FS mounts at the first file
    # request and prints while the shell echoes); the listing shows the line arrived whole.
    for text in ("-         27  hello.txt", "d       4096  docs", "formica> run hello",
                 "hello exited with code 0", "formica> halt",
                 "init: shell exited with code 0; powering off"):
        assert_row(shown, text)
    assert any(line.startswith('@json {"kind":"hello"') for line in shown.lines), shown.text()


@pytest.mark.usefixtures("built")
def test_ps2_keyboard_types_into_the_shell_on_the_uefi_screen(tmp_path, disk):
    result, shown = typed_session(tmp_path, disk, "--boot", "uefi", "--keyboard", "ps2")
    assert_typed_session(result, shown)
    assert_row(shown, "keyboard: PS/2 (i8042) on IRQ 1 (GSI 1), US layout")
    assert any(line.startswith("console: serial none, VGA text none, framebuffer 1024x768 32 bpp")
               for line in shown.lines), shown.text()


@pytest.mark.usefixtures("built")
def test_usb_keyboard_types_into_the_shell_of_the_usb_stick_under_uefi(tmp_path, disk):
    result, shown = typed_session(tmp_path, disk, "--boot", "usb-uefi", "--keyboard", "usb")
    assert_typed_session(result, shown)
    assert_row(shown, "keyboard: no PS/2 controller (i8042)")
    keyboards = [line for line in shown.lines
                 if line.startswith("usb: port ") and line.endswith("boot protocol, US layout")]
    assert len(keyboards) == 1, shown.text()
    assert any("is not a keyboard; left alone" in line for line in shown.lines), \
        "the USB stick on the same controller is found and left alone:\n" + shown.text()


@pytest.mark.usefixtures("built")
def test_bios_iso_boot_draws_on_the_vbe_framebuffer(tmp_path):
    """Under SeaBIOS GRUB sets a VBE mode: the console is the framebuffer, not VGA text."""
    png = tmp_path / "screen.png"
    result = formica.run("--boot", "iso", "--cmd", "run hello", "--screenshot", str(png),
                         "--smp", "2", "--accel", "tcg", timeout=BIOS_TIMEOUT)
    assert result.rc == 0, result.describe()
    consoles = result.kinds("console")
    assert consoles == [{"kind": "console", "serial": True, "vga_text": False, "framebuffer": True,
                         "width": 1024, "height": 768, "columns": 128, "rows": 48}], result.describe()
    shown = screen.Screen(png)
    assert_row(shown, "formica> run hello")
    assert_row(shown, "hello exited with code 0")


@pytest.mark.usefixtures("built")
def test_a_panic_is_readable_on_the_screen(tmp_path):
    """A kernel fault's report and panic line, drawn white on red, survive on the screen."""
    png = tmp_path / "screen.png"
    result = formica.run("--boot", "iso", "--append", "fault=ud", "--screenshot", str(png),
                         "--smp", "1", "--accel", "tcg", timeout=BIOS_TIMEOUT)
    assert result.rc == 1, result.describe()
    panic = next(line for line in result.lines if line.startswith("PANIC on core 0"))
    shown = screen.Screen(png)
    row = shown.find(panic)
    assert shown.row_shows(row, panic, screen.PANIC), shown.text()
    report = next(line for line in result.lines if line.startswith("*** invalid opcode"))
    assert shown.row_shows(shown.find(report), report, screen.PANIC), shown.text()


def test_kernel_boot_keeps_the_vga_text_screen():
    result = formica.run("--cmd", "run hello", "--smp", "1", "--accel", "tcg", timeout=BIOS_TIMEOUT)
    assert result.rc == 0, result.describe()
    assert result.kinds("console") == [{"kind": "console", "serial": True, "vga_text": True,
                                        "framebuffer": False, "width": 0, "height": 0,
                                        "columns": 80, "rows": 25}], result.describe()


def test_a_machine_without_a_serial_port_still_runs_and_reports_its_status():
    """Nothing reaches the runner, and the exit status still does (isa-debug-exit)."""
    result = formica.run("--no-serial", "--cmd", "run hello", "--smp", "1", "--accel", "tcg",
                         timeout=BIOS_TIMEOUT)
    assert result.rc == 0 and not any(result.lines), result.describe()
    failed = formica.run("--no-serial", "--cmd", "run no-such-program", "--smp", "1",
                         "--accel", "tcg", timeout=BIOS_TIMEOUT)
    assert failed.rc == 1 and not any(failed.lines), failed.describe()
