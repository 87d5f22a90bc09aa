# client.py: the one way Python code boots Formica and reads what it reports: runs
# build/run with flags and parses the "@json {...}" lines of the serial output.
# Used by the integration tests (tests/integration/formica.py) and every benchmark
# (build/bench/); linux_guest.py parses its Linux guest's lines with parse_json_lines.
# start() runs one in the background (a Started). A malformed "@json" line is an
# error: every result line must be one JSON object with a "kind"
# (docs/results-format.md).
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


def runner_argv(flags, timeout, runner=RUNNER):
    """The command line that runs `runner` (build/run of this tree or another) with `flags`."""
    return [sys.executable, str(runner), *[str(flag) for flag in flags], "--timeout", str(timeout)]


def run(flags, timeout, log=None, runner=RUNNER):
    """Boots through build/run with `flags`, `--timeout timeout` (and `--log log`);
    returns a Run. A runner that outlives its own timeout by BACKSTOP_SECONDS is
    killed and reported with status EXIT_TIMEOUT. `runner`: another tree's build/run
    (a baseline build, say)."""
    argv = runner_argv(flags, timeout, runner)
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


class Started:
    """build/run running in the background (start()): its stdout and stderr go to files in
    `directory` that the caller reads while it runs (to find a memory node's QEMU pid and
    kill it, say); finish() waits and returns the Run."""

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
        """Wait for the run to end; the Run, as run() returns it (EXIT_TIMEOUT past the
        backstop)."""
        try:
            rc = self.process.wait(self.timeout + BACKSTOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            rc = EXIT_TIMEOUT
        lines = [line.rstrip("\r") for line in self.stdout().split("\n")]
        return Run(rc=rc, lines=lines, jsons=parse_json_lines(lines), stderr=self.stderr(),
                   seconds=time.monotonic() - self.start)


def start(flags, timeout, directory, runner=RUNNER):
    """Like run(), without waiting: a Started whose output goes to files in `directory`."""
    return Started(runner_argv(flags, timeout, runner), directory, timeout)
