# Which QEMU binary build/run (and the benchmarks) run: FORMICA_QEMU if set, else the
# project-local QEMU 10 that build/qemu10.sh unpacked into build/out/qemu10/, else the
# system's qemu-system-x86_64. version() is what the runner prints beside the path.
import os
import shutil
import subprocess

SYSTEM_QEMU = "qemu-system-x86_64"
LOCAL_QEMU = os.path.join("build", "out", "qemu10", "bin", "qemu-system-x86_64")


def choose(repo_root, environ=None, icount=False):
    """(binary, where it came from): 'FORMICA_QEMU', 'project-local' or 'system'. With
    `icount`, the system QEMU when there is one: QEMU 10.0 (the project-local one) stops
    Formica's boot with "Bad icount read" under -icount, Debian 12's QEMU 7.2 does not."""
    environ = os.environ if environ is None else environ
    if environ.get("FORMICA_QEMU"):
        return environ["FORMICA_QEMU"], "FORMICA_QEMU"
    if icount and shutil.which(SYSTEM_QEMU):
        return SYSTEM_QEMU, "system (icount)"
    local = os.path.join(repo_root, LOCAL_QEMU)
    if os.access(local, os.X_OK):
        return local, "project-local"
    return SYSTEM_QEMU, "system"


def resolved_path(binary):
    """The binary's full path (PATH looked up), or None if it cannot be found."""
    return shutil.which(binary)


def version(binary):
    """'10.0.2 (Debian ...)' from `QEMU emulator version ...`, or 'unknown'."""
    try:
        completed = subprocess.run([binary, "-version"], stdin=subprocess.DEVNULL,
                                   capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    first = completed.stdout.splitlines()[0] if completed.stdout else ""
    prefix = "QEMU emulator version "
    return first[len(prefix):] if first.startswith(prefix) else first or "unknown"


def major(binary):
    """The major version number (10 for '10.0.2 (Debian ...)'), or 0 if unknown."""
    text = version(binary)
    number = text.split(".", 1)[0]
    return int(number) if number.isdigit() else 0
