# Bad boot input: a corrupt MADT, a core that never answers INIT-SIPI, too little memory,
# a missing p-kernel module, a boot image without init and a fault on a p-kernel core must
# each end the run quickly with a clear message and a failing exit status, never a hang or a
# silent success; modules with long paths must still be told apart.
import shlex
import subprocess

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 30


def assert_fails_with(result, message):
    assert result.rc not in (0, 124), result.describe()
    assert "PANIC" in result.text, result.describe()
    assert message in result.text, f"expected {message!r}\n{result.describe()}"


def test_corrupt_madt_is_reported():
    result = formica.run("--smp", "2", "--accel", "tcg", "--append", "test_corrupt_madt",
                         timeout=TIMEOUT)
    assert_fails_with(result, "malformed MADT: checksum mismatch")


def test_core_that_never_answers_is_named():
    result = formica.run("--smp", "2", "--accel", "tcg", "--append",
                         "test_phantom_core ap_timeout_ms=500", timeout=TIMEOUT)
    assert_fails_with(result, "did not answer INIT-SIPI-SIPI")
    assert "apic id 240" in result.text, result.describe()


def test_too_little_memory_is_reported():
    result = formica.run("--smp", "1", "--accel", "tcg", "--mem", "20M", timeout=TIMEOUT)
    assert_fails_with(result, "too little memory")


def test_fault_on_a_pkernel_core_ends_the_run():
    result = formica.run("--smp", "4", "--accel", "tcg", "--append", "fault=ud fault_core=2",
                         timeout=TIMEOUT)
    assert_fails_with(result, "invalid opcode")
    assert "on core 2" in result.text and "p-kernel" in result.text, result.describe()


def test_missing_pkernel_module_is_reported():
    dry = subprocess.run([str(formica.RUNNER), "--dry-run", "--smp", "2", "--accel", "tcg",
                          "--disk", "none"],
                         capture_output=True, text=True, check=True)
    argv = shlex.split(dry.stdout.strip().splitlines()[-1])
    index = argv.index("-initrd")
    del argv[index:index + 2]
    completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=TIMEOUT)
    assert completed.returncode == 35, completed.stdout  # isa-debug-exit: guest wrote 0x11
    assert "no p-kernel boot module" in completed.stdout
    assert "PANIC" in completed.stdout


def dry_run_argv(*flags):
    """The QEMU command line build/run would run, as a list."""
    dry = subprocess.run([str(formica.RUNNER), "--dry-run", "--accel", "tcg", "--disk", "none", *flags],
                         capture_output=True, text=True, check=True)
    return shlex.split(dry.stdout.strip().splitlines()[-1])


def test_a_boot_without_init_fails():
    """Only the p-kernel as a module: nothing to run is a failure (status 1), never a success."""
    argv = dry_run_argv("--smp", "2")
    index = argv.index("-initrd")
    argv[index + 1] = argv[index + 1].split(",")[0]  # the p-kernel, no initrd
    completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=TIMEOUT)
    assert completed.returncode == 35, completed.stdout  # isa-debug-exit: guest wrote 0x11
    assert "no init program in the boot image" in completed.stdout


def test_modules_with_long_paths_are_found(tmp_path):
    """A module's name is its path; a long checkout path must not cut off 'initrd' or 'pkernel'."""
    deep = tmp_path / ("a-long-folder-name-" * 6)
    deep.mkdir()
    argv = dry_run_argv("--smp", "2", "--cmd", "echo long paths work")
    index = argv.index("-initrd")
    copies = []
    for module in argv[index + 1].split(","):
        copy = deep / module.rsplit("/", 1)[-1]
        copy.write_bytes(open(module, "rb").read())
        copies.append(str(copy))
    assert all(len(path) > 64 for path in copies)
    argv[index + 1] = ",".join(copies)
    completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=TIMEOUT)
    assert "long paths work" in completed.stdout, completed.stdout
    assert completed.returncode == 33, completed.stdout  # isa-debug-exit: guest wrote 0x10
