# client.py: the one way Python code boots Formica and reads what it reports: runs
# build/run with flags and parses the "@json {...}" lines of the serial output.
# Used by the integration tests (tests/integration/formica.py) and every benchmark
# (build/bench/); linux_guest.py parses its Linux guest's lines with parse_json_lines.
# A malformed "@json" line is an error: every result line must be one JSON object
# with a "kind" (docs/results-format.md).
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
EXIT_TIMEOUT = 124     # build/run's status for a timeout; also used when the backstop fires


class MalformedResult(ValueError):
    """An "@json" line that is not one JSON object with a "kind"."""


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
        """Everything a failing assertion or a failed benchmark boot should show."""
        return f"exit status {self.rc} after {self.seconds:.1f} s\n--- serial ---\n{self.text}\n--- stderr ---\n{self.stderr}"


def parse_json_lines(lines):
    """The "@json" objects among `lines`, in order; MalformedResult on a bad one."""
    results = []
    for line in lines:
        position = line.find(JSON_MARKER)
        if position < 0:
            continue
        payload = line[position + len(JSON_MARKER):].strip()
        try:
            result = json.loads(payload)
        except ValueError as error:
            raise MalformedResult(f"malformed @json line {line!r}: {error}") from None
        if not isinstance(result, dict) or "kind" not in result:
            raise MalformedResult(f"@json line without a 'kind' object: {line!r}")
        results.append(result)
    return results


def split_lines(output):
    """Serial output (bytes) -> lines without the console's carriage returns."""
    return [line.rstrip("\r") for line in output.decode("utf-8", errors="replace").split("\n")]


def run(flags, timeout, log=None):
    """Boots through build/run with `flags`, `--timeout timeout` (and `--log log`);
    returns a Run. A runner that outlives its own timeout by BACKSTOP_SECONDS is
    killed and reported with status EXIT_TIMEOUT."""
    argv = [sys.executable, str(RUNNER), *[str(flag) for flag in flags], "--timeout", str(timeout)]
    if log is not None:
        argv += ["--log", str(log)]
    start = time.monotonic()
    try:
        completed = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                                   timeout=timeout + BACKSTOP_SECONDS)
        rc, stdout, stderr = completed.returncode, completed.stdout, completed.stderr
    except subprocess.TimeoutExpired as expired:
        rc, stdout = EXIT_TIMEOUT, expired.stdout or b""
        stderr = (expired.stderr or b"") + b"\nclient: build/run itself did not stop; killed\n"
    lines = split_lines(stdout)
    return Run(rc=rc, lines=lines, jsons=parse_json_lines(lines),
               stderr=stderr.decode("utf-8", errors="replace"), seconds=time.monotonic() - start)
