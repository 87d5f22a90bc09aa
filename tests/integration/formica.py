# Helper for the QEMU integration tests: build/run through the one client module
# (build/runner/client.py), which returns a Run (exit status, serial lines, the "@json"
# result objects, stderr, seconds). A malformed "@json" line fails the test.
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "build"))

from runner.client import (BACKSTOP_SECONDS, OUT_DIR, REPO_ROOT, RUNNER, Run,  # noqa: E402,F401
                           parse_json_lines)
from runner import client  # noqa: E402


def run(*flags, timeout=60):
    """Run build/run with these flags and --timeout; return a Run. Without a --disk flag the
    guest gets no disk: the build's image is never written by tests, and parallel runs
    never fight over its lock (tests that need a disk pass a copy)."""
    disk = [] if "--disk" in flags or "--dry-run" in flags else ["--disk", "none"]
    return client.run([*flags, *disk], timeout)


class Started:
    """build/run running in the background (start()): its stdout and stderr go to files that
    the test reads while it runs, e.g. to find a memory node's QEMU pid and kill it."""

    def __init__(self, argv, directory, timeout):
        self.stdout_path = Path(directory) / "run.stdout"
        self.stderr_path = Path(directory) / "run.stderr"
        self.timeout = timeout
        self.start = time.monotonic()
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)

    def stdout(self):
        return self.stdout_path.read_bytes().decode("utf-8", errors="replace")

    def stderr(self):
        return self.stderr_path.read_bytes().decode("utf-8", errors="replace")

    def wait_for(self, predicate, seconds):
        """Poll until predicate(stdout, stderr) is true (True) or `seconds` pass (False)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self.process.poll() is None:
            if predicate(self.stdout(), self.stderr()):
                return True
            time.sleep(0.5)
        return predicate(self.stdout(), self.stderr())

    def finish(self):
        """Wait for the run to end; the Run, as run() returns it."""
        try:
            rc = self.process.wait(self.timeout + BACKSTOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            rc = self.process.wait()
        lines = [line.rstrip("\r") for line in self.stdout().split("\n")]
        return Run(rc=rc, lines=lines, jsons=parse_json_lines(lines), stderr=self.stderr(),
                   seconds=time.monotonic() - self.start)


def start(directory, *flags, timeout=60):
    """Like run(), without waiting: returns a Started."""
    disk = [] if "--disk" in flags else ["--disk", "none"]
    argv = [sys.executable, str(RUNNER), *flags, *disk, "--timeout", str(timeout)]
    return Started(argv, directory, timeout)


class CpuHog:
    """A busy loop on the host (a context manager), to run a test on a loaded machine."""

    def __enter__(self):
        self.process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        return self

    def __exit__(self, *exc):
        self.process.kill()
        self.process.wait()
