# build/bench/kvm_start.py: whether each system's kernel starts under KVM here, found out in
# seconds, before a benchmark's KVM series spends boots on it (evaluate.py, pager_vs_linux.py).
# Each system boots bare under --accel kvm and is watched for the first line its kernel prints:
# Formica's "Formica m-kernel starting", and for the Linux guest the `linux_guest` record of its
# init (with `quiet` its kernel prints nothing before). Without that line within START_SECONDS
# the series leaves the system out and says why. Under this project's kvm_pvm (KVM that runs
# kernel code in its instruction emulator) Formica's first line comes some 13 s into the boot
# on a loaded host, and the Linux guest never gets past its real-mode setup ("Probing EDD"):
# each of its boots used to wait out the whole boot timeout, twice.
import os
import selectors
import signal
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import linux_guest  # noqa: E402
from runner import client  # noqa: E402

# A kernel that has printed nothing of its own by then will not run a benchmark in any useful
# time: under TCG on this project's 2-core host at a load of 7, Formica prints its line within
# a second and the Linux guest's init within 20-35 s (KVM that works is faster still).
START_SECONDS = 60
SMOKE_START_SECONDS = 10  # a --smoke run only checks that the probes work
FORMICA_MARKER = b"Formica m-kernel starting"
LINUX_MARKER = b'"kind":"linux_guest"'
STOP_GRACE_SECONDS = 5


def first_line_within(argv, marker, seconds):
    """Runs `argv` (in a process group of its own) until its output holds `marker` or `seconds`
    pass, then stops it; the seconds it took to print the marker, or None."""
    start = time.monotonic()
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    seen, found = b"", None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while found is None and (left := start + seconds - time.monotonic()) > 0:
            if not selector.select(left):
                continue
            chunk = os.read(process.stdout.fileno(), 65536)
            if not chunk:
                break  # it ended without the marker
            seen = seen[-len(marker):] + chunk
            if marker in seen:
                found = time.monotonic() - start
    stop(process)
    return found


def stop(process):
    """SIGTERM to the group (build/run then stops its QEMU), SIGKILL if it lingers."""
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            break
        try:
            process.wait(STOP_GRACE_SECONDS)
            break
        except subprocess.TimeoutExpired:
            continue
    process.stdout.close()


def verdict(system, accel, cpu, took, seconds):
    """(True, how long) or (False, why) for a start probe's result."""
    under = f"under {accel.upper()} (-cpu {cpu})"
    if took is not None:
        return True, f"{system}'s kernel printed its first line {under} in {took:.1f} s"
    pvm = accel == "kvm" and os.path.isdir("/sys/module/kvm_pvm")
    return False, (f"{system}'s kernel printed nothing {under} within {seconds} s, so its boots "
                   "there cannot run here"
                   + (" (/dev/kvm is kvm_pvm, which runs kernel code in KVM's instruction emulator)"
                      if pvm else ""))


def formica_starts(cpu, seconds=START_SECONDS, accel="kvm"):
    """Whether Formica's kernel starts under `accel` with CPU model `cpu`: (ok, what was seen)."""
    flags = ["--accel", accel, "--cpu", cpu, "--smp", "1", "--disk", "none", "--cmd", "cores"]
    took = first_line_within(client.runner_argv(flags, seconds + STOP_GRACE_SECONDS), FORMICA_MARKER,
                             seconds)
    return verdict("Formica", accel, cpu, took, seconds)


def linux_starts(cpu, seconds=START_SECONDS, accel="kvm"):
    """Whether the Linux guest's kernel boots to its init under `accel` with CPU model `cpu`."""
    with tempfile.TemporaryDirectory(prefix="formica-kvm-start-") as scratch:
        disk = Path(scratch) / "ext2.img"  # the init mounts it read-write
        shutil.copyfile(linux_guest.LINUX_OUT / "ext2.img", disk)
        argv = linux_guest.qemu_command(1, None, "256M", accel, False, "", disk, cpu=cpu)
        took = first_line_within(argv, LINUX_MARKER, seconds)
    return verdict("Linux", accel, cpu, took, seconds)
