# Helper for the QEMU integration tests: build/run through the one client module
# (build/runner/client.py), which returns a Run (exit status, serial lines, the "@json"
# result objects, stderr, seconds). A malformed "@json" line fails the test.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "build"))

from runner.client import OUT_DIR, REPO_ROOT, RUNNER, Run, parse_json_lines  # noqa: E402,F401
from runner import client  # noqa: E402


def run(*flags, timeout=60):
    """Run build/run with these flags and --timeout; return a Run. Without a --disk flag the
    guest gets no disk: the build's image is never written by tests, and parallel runs
    never fight over its lock (tests that need a disk pass a copy)."""
    disk = [] if "--disk" in flags or "--dry-run" in flags else ["--disk", "none"]
    return client.run([*flags, *disk], timeout)
