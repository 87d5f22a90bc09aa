# Tests of build/run itself: flag validation, the timeout, the QEMU command line it builds
# (--dry-run), and --log. Most need no working kernel.
import shlex

import pytest

import formica
from runner.qemu_cmd import disk_serial  # noqa: E402 (build/, on the path through formica)

USAGE_ERROR = 2
TIMEOUT = 124


def dry_run(*flags):
    result = formica.run("--dry-run", "--accel", "tcg", *flags)
    assert result.rc == 0, result.describe()
    command_lines = [line for line in result.lines if line.strip()]
    assert len(command_lines) == 1, result.describe()
    return shlex.split(command_lines[0])


def value_after(argv, option):
    """Values following every occurrence of option in argv."""
    return [argv[index + 1] for index, word in enumerate(argv[:-1]) if word == option]


@pytest.mark.parametrize("flags", [
    ["--smp", "0"],
    ["--smp", "257"],
    ["--smp", "256"],  # the pc machine stops at 255: --machine q35

    ["--smp", "many"],
    ["--smp", "4", "--sockets", "3"],
    ["--mem", "lots"],
    ["--placement", "10"],
    ["--memnodes", "17"],
    ["--memnodes", "1", "--memnode-mem", "64M", "--memnode-capacity", "60M"],
    ["--icount", "--accel", "kvm"],
    ["--boot", "floppy"],
    ["--disk", "/nonexistent/disk.img"],
    ["--disk-bus", "scsi"],
    ["--no-such-flag"],
    ["--boot", "usb", "--usb-image", "/nonexistent/stick.img"],
    ["--boot", "iso", "--usb-image", "build/out/formica.iso"],  # a stick only for usb boots
    ["--keys", "ls\\n", "--cmd", "ls"],  # keys go to the interactive shell, which --cmd is not
    ["--keys", "caf\u00e9"],  # no such key on a US keyboard
    ["--keys", ""],
    ["--keyboard", "serial"],
    ["--display", "gtk"],
])
def test_bad_flags_are_usage_errors(flags):
    result = formica.run(*flags, timeout=10)
    assert result.rc == USAGE_ERROR, result.describe()
    assert result.seconds < 10, result.describe()


def test_dry_run_console_flags():
    """docs/runner.md, "The screen and the keyboard": what each console flag asks of QEMU."""
    usb = dry_run("--keyboard", "usb", "--no-serial", "--display", "vnc:3")
    assert "i8042=off" in value_after(usb, "-machine"), usb
    assert value_after(usb, "-device").count("qemu-xhci,id=xhci") == 1, usb
    assert "usb-kbd,bus=xhci.0" in value_after(usb, "-device"), usb
    assert value_after(usb, "-serial") == ["none"], usb
    assert value_after(usb, "-display") == ["vnc=127.0.0.1:3"], usb
    stick = dry_run("--boot", "usb-uefi", "--keyboard", "usb")
    assert value_after(stick, "-device").count("qemu-xhci,id=xhci") == 1, stick  # the stick's
    plain = dry_run("--keyboard", "ps2")
    assert "usb-kbd,bus=xhci.0" not in value_after(plain, "-device"), plain
    assert value_after(plain, "-serial") == ["stdio"] and value_after(plain, "-display") == ["none"]
    shot = dry_run("--screenshot", "/tmp/screen.png")
    assert value_after(shot, "-action") == ["shutdown=pause"], shot  # the screen outlives the guest
    assert len(value_after(shot, "-qmp")) == 1, shot
    assert value_after(plain, "-action") == [] and value_after(plain, "-qmp") == [], plain


@pytest.mark.usefixtures("built")
def test_timeout_saves_the_screen_of_an_interactive_shell(tmp_path):
    """Keys typed, no halt: the run ends at its timeout, with the screen saved then."""
    png = tmp_path / "screen.png"
    result = formica.run("--keys", "run hello\\n", "--screenshot", str(png), "--smp", "1",
                         "--accel", "tcg", "--boot", "iso", timeout=60)
    assert result.rc == TIMEOUT, result.describe()
    assert "console: typed 10 keys" in result.stderr, result.describe()
    assert "at the timeout, screen saved" in result.stderr, result.describe()
    assert "hello exited with code 0" in result.lines, result.describe()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.usefixtures("built")
def test_timeout_kills_a_stopped_guest():
    result = formica.run("--smp", "2", "--accel", "tcg", "--qemu", "-S", timeout=3)
    assert result.rc == TIMEOUT, result.describe()
    assert result.seconds < 10, result.describe()
    assert "TIMEOUT" in result.stderr, result.describe()


def test_dry_run_kernel_boot_command_line():
    argv = dry_run("--smp", "4", "--sockets", "2", "--mem", "512M",
                   "--append", "selftest=intercore", "--append", "x=a,b",
                   "--cmd", "ls /; cat a,b", "--placement", "5", "--icount",
                   "--qemu", "-d int")
    assert argv[0].endswith("qemu-system-x86_64")
    assert value_after(argv, "-smp") == ["4,sockets=2,cores=2,threads=1"]
    assert value_after(argv, "-m") == ["512M"]
    assert value_after(argv, "-accel") == ["tcg"]
    assert value_after(argv, "-kernel")[0].endswith("build/out/mkernel.elf")
    modules = value_after(argv, "-initrd")[0].split(",")
    assert modules[0].endswith("build/out/pkernel.elf")
    assert modules[1].endswith("build/out/initrd.tar")
    assert "isa-debug-exit,iobase=0xf4,iosize=4" in value_after(argv, "-device")
    assert value_after(argv, "-serial") == ["stdio"]
    assert "-no-reboot" in argv
    assert value_after(argv, "-icount") == ["shift=0,align=off,sleep=off"]
    assert argv[-2:] == ["-d", "int"]
    cmdline = "placement=5 cmd=ls%20/%3B%20cat%20a%2Cb selftest=intercore x=a,b"
    assert value_after(argv, "-append") == [cmdline]
    assert value_after(argv, "-fw_cfg") == [
        "name=opt/formica/cmdline,string=" + cmdline.replace(",", ",,")]


def test_dry_run_iso_and_uefi_boots():
    iso_argv = dry_run("--boot", "iso")
    assert "-kernel" not in iso_argv
    assert any("build/out/formica.iso" in value for value in value_after(iso_argv, "-drive"))
    uefi_argv = dry_run("--boot", "uefi", "--append", "selftest=intercore")
    assert any("OVMF" in value for value in value_after(uefi_argv, "-drive") + value_after(uefi_argv, "-bios"))
    # No --cmd and no terminal on stdin: the runner asks for an empty command list (cmd=).
    assert value_after(uefi_argv, "-fw_cfg") == [
        "name=opt/formica/cmdline,string=cmd= selftest=intercore"]


def test_dry_run_devices(tmp_path):
    disk = tmp_path / "disk.img"
    disk.write_bytes(bytes(1024 * 1024))
    placement = tmp_path / "placement.conf"
    placement.write_text("fs 1\nblk 2\n")
    argv = dry_run("--machine", "q35", "--disk", str(disk), "--nvm", f"{tmp_path}/nvm.img:128M",
                   "--placement", str(placement), "--x2apic")
    assert value_after(argv, "-machine") == ["q35,nvdimm=on"]
    assert value_after(argv, "-m") == ["256M,slots=2,maxmem=384M"]
    assert f"virtio-blk-pci,drive=disk0,serial={disk_serial(disk)}" in value_after(argv, "-device")
    assert "nvdimm,id=nvdimm1,memdev=nv1,slot=0" in value_after(argv, "-device")
    assert value_after(argv, "-cpu") == ["max,+x2apic,enforce"]
    assert f"name=opt/formica/placement,file={placement}" in value_after(argv, "-fw_cfg")
    assert value_after(argv, "-append") == ["placement=file cmd="]


def test_dry_run_256_cores_on_q35():
    argv = dry_run("--smp", "256", "--machine", "q35")
    assert value_after(argv, "-smp") == ["256"]
    assert value_after(argv, "-machine") == ["q35"]


def test_formica_qemu_overrides_the_project_local_qemu(monkeypatch):
    monkeypatch.setenv("FORMICA_QEMU", "/usr/bin/qemu-system-x86_64")
    assert dry_run("--smp", "1")[0] == "/usr/bin/qemu-system-x86_64"


def test_project_local_qemu_is_preferred(monkeypatch):
    monkeypatch.delenv("FORMICA_QEMU", raising=False)
    local = formica.OUT_DIR / "qemu10" / "bin" / "qemu-system-x86_64"
    if not local.exists():
        pytest.skip("no project-local QEMU: build/deps.sh could not fetch it")
    assert dry_run("--smp", "1")[0] == str(local)


@pytest.mark.usefixtures("built")
def test_runner_says_which_qemu_it_runs():
    result = formica.run("--smp", "1", "--accel", "tcg", timeout=60)
    assert result.rc == 0, result.describe()
    binary = formica.qemu()
    says = [line for line in result.stderr.splitlines() if line.startswith("build/run: QEMU ")]
    assert len(says) == 1, result.describe()
    assert says[0].endswith(")") and "/" in says[0], result.describe()
    assert (binary in says[0]) or ("/usr/bin/" + binary in says[0]), result.describe()


@pytest.mark.parametrize("bus, machine, devices", [
    ("virtio", "pc", ["virtio-blk-pci,drive=disk0,serial=SERIAL"]),
    ("ahci", "pc", ["ahci,id=ahci0", "ide-hd,drive=disk0,bus=ahci0.0,serial=SERIAL"]),
    ("ahci", "q35", ["ide-hd,drive=disk0,bus=ide.0,serial=SERIAL"]),
    ("nvme", "pc", ["nvme,serial=SERIAL,drive=disk0"]),
    ("nvme", "q35", ["nvme,serial=SERIAL,drive=disk0"]),
])
def test_dry_run_disk_buses(tmp_path, bus, machine, devices):
    disk = tmp_path / "disk.img"
    disk.write_bytes(bytes(1024 * 1024))
    argv = dry_run("--machine", machine, "--disk", str(disk), "--disk-bus", bus)
    assert value_after(argv, "-drive") == [f"file={disk},format=raw,if=none,id=disk0"]
    devices = [device.replace("SERIAL", disk_serial(disk)) for device in devices]
    assert [device for device in value_after(argv, "-device")
            if "disk0" in device or device.startswith("ahci")] == devices


@pytest.mark.usefixtures("built")
def test_log_saves_the_serial_output(tmp_path):
    log = tmp_path / "serial.log"
    result = formica.run("--smp", "1", "--accel", "tcg", "--log", str(log), timeout=60)
    assert result.rc == 0, result.describe()
    saved = log.read_text(errors="replace").replace("\r", "")
    assert result.kinds("cores"), result.describe()
    assert '"kind":"cores"' in saved.replace(" ", "")


def test_icount_boot_runs_a_command():
    """--icount boots and runs (make bench's icount series, make profile): the runner picks a
    QEMU that can (QEMU 10.0 stops the boot with "Bad icount read"; Debian's 7.2 runs it)."""
    result = formica.run("--smp", "2", "--icount", "--cpu", "max,-erms,-fsrm",
                         "--cmd", "run hello", timeout=300)
    assert result.rc == 0, result.describe()
    assert "Bad icount read" not in result.stderr, result.describe()
    assert "hello exited with code 0" in result.text, result.describe()
