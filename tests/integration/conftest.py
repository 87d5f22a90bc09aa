# Shared fixtures for the QEMU integration tests.
# `built` fails a test with a clear message when the kernel images are missing (nothing is
# skipped silently); each session's counts and skips (test, reason) go to
# build/out/pytest-session.json for .ci/run, which fails on a skip expected_skips.py does not declare.
import json

import pytest

from formica import OUT_DIR

BUILD_OUTPUTS = ["mkernel.elf", "pkernel.elf", "formica.iso"]
SESSION_REPORT = OUT_DIR / "pytest-session.json"
_counts = {"passed": 0, "failed": 0, "skipped": 0}
_skips = []  # {"test": node id, "reason": text}, for .ci/run's check against expected_skips.py


@pytest.fixture(scope="session")
def built():
    missing = [name for name in BUILD_OUTPUTS if not (OUT_DIR / name).is_file()]
    if missing:
        pytest.fail(f"build outputs missing in {OUT_DIR}: {', '.join(missing)}; run `make` first",
                    pytrace=False)


def pytest_configure(config):
    config.addinivalue_line("markers", "many_cores: slow boots of 200+ vCPUs; only in "
                            "`make test-many-cores` (tests/integration/run leaves them out)")
    config.addinivalue_line("markers", "slow: long runs, only with FORMICA_SLOW_TESTS=1 "
                            "(make test-slow); deselected from make test")


def pytest_collection_modifyitems(config, items):
    """Slow tests run only when FORMICA_SLOW_TESTS=1; otherwise they are deselected (and
    counted as such by pytest), never skipped silently."""
    import os
    if os.environ.get("FORMICA_SLOW_TESTS") == "1":
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


def skip_reason(report):
    """The text a pytest.skip() or skipif gave ("Skipped: " taken off)."""
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_runtest_logreport(report):
    if report.failed:
        _counts["failed"] += 1
    elif report.skipped:
        _counts["skipped"] += 1
        _skips.append({"test": report.nodeid, "reason": skip_reason(report)})
    elif report.passed and report.when == "call":
        _counts["passed"] += 1


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):  # an xdist worker: the controller reports
        return
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    report = dict(_counts, collected=session.testscollected, exitstatus=int(exitstatus), skips=_skips)
    SESSION_REPORT.write_text(json.dumps(report) + "\n")
