# Helper for the QEMU integration tests: runs build/run with flags and parses its output.
# run() returns a Run: exit status, serial lines, the "@json" result objects, stderr, seconds.
# A malformed "@json" line is a test failure: every result line must be one JSON object.
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import List, NamedTuple

REPO_ROOT = Path(__file__).resolve().parents[2]
RUNNER = REPO_ROOT / "build" / "run"
OUT_DIR = REPO_ROOT / "build" / "out"
JSON_MARKER = "@json "
BACKSTOP_SECONDS = 30  # beyond the runner's own --timeout, in case the runner itself hangs

sys.path.insert(0, str(REPO_ROOT / "build"))
from runner import qemu_binary  # noqa: E402


def qemu():
    """The QEMU binary build/run runs (FORMICA_QEMU, else the project-local QEMU 10, else
    the system's)."""
    return qemu_binary.choose(str(REPO_ROOT))[0]


class Run(NamedTuple):
    rc: int
    lines: List[str]
    jsons: List[dict]
    stderr: str
    seconds: float

    @property
    def text(self):
        return "\n".join(self.lines)

    def kinds(self, kind):
        return [result for result in self.jsons if result.get("kind") == kind]

    def describe(self):
        """Everything a failing assertion should show."""
        return f"exit status {self.rc} after {self.seconds:.1f} s\n--- serial ---\n{self.text}\n--- stderr ---\n{self.stderr}"


def parse_json_lines(lines):
    results = []
    for line in lines:
        position = line.find(JSON_MARKER)
        if position < 0:
            continue
        payload = line[position + len(JSON_MARKER):].strip()
        try:
            result = json.loads(payload)
        except ValueError as error:
            raise AssertionError(f"malformed @json line {line!r}: {error}") from None
        if not isinstance(result, dict) or "kind" not in result:
            raise AssertionError(f"@json line without a 'kind' object: {line!r}")
        results.append(result)
    return results


def run(*flags, timeout=60):
    """Run build/run with these flags and --timeout; return a Run. Without a --disk flag the
    guest gets no disk: the build's image is never written by tests, and parallel runs
    never fight over its lock (tests that need a disk pass a copy)."""
    disk = [] if "--disk" in flags or "--dry-run" in flags else ["--disk", "none"]
    argv = [sys.executable, str(RUNNER), *flags, *disk, "--timeout", str(timeout)]
    start = time.monotonic()
    completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=timeout + BACKSTOP_SECONDS)
    seconds = time.monotonic() - start
    stdout = completed.stdout.decode("utf-8", errors="replace")
    lines = [line.rstrip("\r") for line in stdout.split("\n")]
    return Run(rc=completed.returncode, lines=lines, jsons=parse_json_lines(lines),
               stderr=completed.stderr.decode("utf-8", errors="replace"), seconds=seconds)
