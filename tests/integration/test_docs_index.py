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


# The names check (build/doc_names.py, `check-docs-index --names DOC`): one sentence
# with a name that does not exist fails it, naming the name; the same sentence with a
# name that does exist passes. (The checker does not count this file's names as sources.)
def check_names(tmp_path, text):
    document = tmp_path / "page.md"
    document.write_text(text)
    return subprocess.run([sys.executable, str(CHECK), "--names", str(document)], capture_output=True, text=True)


def test_the_docs_name_only_what_exists():
    result = subprocess.run([sys.executable, str(CHECK)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_existing_names_pass(tmp_path):
    (tmp_path / "other.md").write_text("another page\n")
    result = check_names(tmp_path, "FS answers in `fs_dispatch()` from `servers/fs/main.c` and `ring.c`;\n"
                                   "`FS_READBLOCK` reads, `make docs-check` checks, `make -C tests/unit` tests.\n"
                                   "`FS_FSYNC = 14` is its number. See [the other page](other.md).\n")
    assert result.returncode == 0, result.stderr


def test_a_function_that_does_not_exist_fails(tmp_path):
    result = check_names(tmp_path, "The free count comes from `physical_free_frames()`.\n")
    assert result.returncode == 1
    assert "`physical_free_frames()`: no function physical_free_frames" in result.stderr


def test_a_file_that_does_not_exist_fails(tmp_path):
    result = check_names(tmp_path, "Measured with `measure.sh`, see `servers/fs/nowhere.c`.\n")
    assert result.returncode == 1
    assert "`measure.sh`: no such file" in result.stderr
    assert "`servers/fs/nowhere.c`: no such file" in result.stderr


def test_a_constant_that_does_not_exist_fails(tmp_path):
    result = check_names(tmp_path, "FS answers `FS_TELEPORT` too.\n")
    assert result.returncode == 1 and "`FS_TELEPORT`: no such name" in result.stderr


def test_a_constant_with_a_wrong_value_fails(tmp_path):
    result = check_names(tmp_path, "`FS_FSYNC = 3` is its number.\n")
    assert result.returncode == 1 and "FS_FSYNC is 14" in result.stderr


def test_a_make_target_that_does_not_exist_fails(tmp_path):
    result = check_names(tmp_path, "Run `make measure-everything`.\n\n    make docs-check QUICK=1\n    make teleport\n")
    assert result.returncode == 1
    assert "`make measure-everything`: no such target" in result.stderr
    assert "`make teleport`: no such target" in result.stderr
    assert "docs-check" not in result.stderr


def test_a_broken_link_fails(tmp_path):
    result = check_names(tmp_path, "See [the profile](profiling-history.md).\n")
    assert result.returncode == 1 and "(profiling-history.md): no such file" in result.stderr


def test_a_message_number_already_taken_fails(tmp_path):
    result = check_names(tmp_path, "Declare it in `protocol/fs.messages`:\n\n```\n"
                                   "message touch 14: Sets a file's modification time.\n"
                                   "    in u64 handle: the open file\n    right file\n```\n")
    assert result.returncode == 1
    assert "`message touch 14` is not new in protocol/fs.messages: it has `message fsync 14`" in result.stderr


def test_a_new_message_introduces_its_generated_names(tmp_path):
    """A message a code block declares (a free number) lets the prose cite what the
    generator makes of it; a name it does not make still fails."""
    block = ("Declare it in `protocol/fs.messages`:\n\n```\nmessage touch 99: Sets a file's time.\n"
             "    in u64 handle: the open file\n    right file\n```\n\n")
    passed = check_names(tmp_path, block + "It generates `FS_TOUCH` and `fs_touch_of(page)`.\n")
    assert passed.returncode == 0, passed.stderr
    failed = check_names(tmp_path, block + "It generates `FS_TOUCHED`.\n")
    assert failed.returncode == 1 and "`FS_TOUCHED`" in failed.stderr
