# The docs index check (build/check-docs-index, `make docs-check`): it passes on the
# repository's docs/architecture.md, and fails, naming the file, when one source file's
# entry is taken out of a copy of it. No QEMU.
import subprocess
import sys

import formica

CHECK = formica.REPO_ROOT / "build" / "check-docs-index"
ARCHITECTURE = formica.REPO_ROOT / "docs" / "architecture.md"


def check(document):
    return subprocess.run([sys.executable, str(CHECK), str(document)], capture_output=True, text=True)


def test_architecture_lists_every_source_file():
    result = check(ARCHITECTURE)
    assert result.returncode == 0, result.stderr


def test_a_file_left_out_is_named(tmp_path):
    text = ARCHITECTURE.read_text()
    entry = "| `spinlock.h` | test-and-test-and-set lock with interrupts off |\n"
    assert entry in text
    copy = tmp_path / "architecture.md"
    copy.write_text(text.replace(entry, ""))
    result = check(copy)
    assert result.returncode == 1
    assert "    kernel/spinlock.h\n" in result.stderr
    assert result.stderr.count("\n    ") == 1


def test_a_header_named_only_by_its_stem_is_missing(tmp_path):
    text = ARCHITECTURE.read_text()
    entry = "| `ring.c`, `ring.h` |"
    assert entry in text
    copy = tmp_path / "architecture.md"
    copy.write_text(text.replace(entry, "| `ring.c` |"))
    result = check(copy)
    assert result.returncode == 1 and "    kernel/ring.h\n" in result.stderr
