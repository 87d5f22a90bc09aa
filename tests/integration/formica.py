# Helper for the QEMU integration tests: build/run through the one client module
# (build/runner/client.py), which returns a Run (exit status, serial lines, the "@json"
# result objects, stderr, seconds). A malformed "@json" line fails the test.
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "build"))

from runner.client import (OUT_DIR, REPO_ROOT, RUNNER, Run,  # noqa: E402,F401
                           parse_json_lines)
from runner import client  # noqa: E402
from runner import qemu_binary  # noqa: E402


def qemu():
    """The QEMU binary build/run runs (FORMICA_QEMU, else the project-local QEMU 10, else
    the system's)."""
    return qemu_binary.choose(str(REPO_ROOT))[0]


def run(*flags, timeout=60):
    """Run build/run with these flags and --timeout; return a Run. Without a --disk flag the
    guest gets no disk: the build's image is never written by tests, and parallel runs
    never fight over its lock (tests that need a disk pass a copy)."""
    disk = [] if "--disk" in flags or "--dry-run" in flags else ["--disk", "none"]
    return client.run([*flags, *disk], timeout)


def start(directory, *flags, timeout=60):
    """Like run(), without waiting: returns a client.Started (stdout and stderr in files
    under `directory`, read while it runs; finish() gives the Run)."""
    disk = [] if "--disk" in flags else ["--disk", "none"]
    return client.start([*flags, *disk], timeout, directory)


class CpuHog:
    """A busy loop on the host (a context manager), to run a test on a loaded machine."""

    def __enter__(self):
        self.process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.wait()


def qemu_major():
    """The major version of that QEMU (0 if it cannot say)."""
    return qemu_binary.major(qemu())


X2APIC_QEMU_MAJOR = 10  # QEMU's TCG offers x2APIC from here on (10.0 checked; 7.2 has none)


def qemu_rejects_x2apic():
    """QEMU's complaint if its TCG cannot give the guest x2APIC, else None."""
    argv = [qemu(), "-accel", "tcg", "-cpu", "max,+x2apic,enforce",
            "-machine", "pc", "-S", "-display", "none", "-monitor", "none", "-serial", "none"]
    try:
        completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                                   timeout=5)
    except subprocess.TimeoutExpired:
        return None  # QEMU accepted the CPU and sat waiting (-S)
    return completed.stderr.decode(errors="replace").strip() or f"exit status {completed.returncode}"


def run_check(script, *arguments):
    """A no-QEMU check of build/ (check-ica-layers, check-kernel-circles) on the built objects."""
    return subprocess.run([sys.executable, str(REPO_ROOT / "build" / script), *arguments],
                          capture_output=True, text=True)


def planted_call(tmp_path, function):
    """An object whose one function calls `function`: planted into a check (--plant) as
    if a source file of the kernel called it."""
    source = tmp_path / "planted.c"
    source.write_text(f"extern void {function}(void);\nvoid planted(void) {{ {function}(); }}\n")
    obj = tmp_path / "planted.o"
    subprocess.run(["gcc", "-c", "-o", str(obj), str(source)], check=True)
    return obj
