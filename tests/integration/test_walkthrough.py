# docs/walkthrough.md is executed: its marked code blocks (an FS request, an inter-core
# message, a system call and a shell command `df`) are applied to a scratch copy of the
# repository, which must fail its first build where step 2 says (the FS handler missing),
# then build whole and boot: `df` prints both counts. So the page cannot drift from the code.
import re
import shutil
import subprocess

import formica
from walkthrough_steps import apply, steps_of

WALKTHROUGH = formica.REPO_ROOT / "docs" / "walkthrough.md"
BUILD_TIMEOUT = 900
DF_LINE = re.compile(r"^(\d+) blocks free on the disk, (\d+) frames free in memory$", re.M)


def scratch_copy(destination):
    """The repository's tracked and untracked-but-not-ignored files, copied (no build/out/)."""
    listed = subprocess.run(["git", "-C", str(formica.REPO_ROOT), "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], check=True, capture_output=True).stdout.split(b"\0")
    for name in filter(None, (entry.decode() for entry in listed)):
        source = formica.REPO_ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name, follow_symlinks=False)
    return destination


# What a `--boot kernel` run with a disk needs (no ISO, no 1 KiB-block image).
BOOT_TARGETS = ["build/out/mkernel.elf", "build/out/pkernel.elf", "build/out/initrd.tar", "build/out/disk.img"]


def make(tree, *targets):
    return subprocess.run(["make", "-j2", *targets], cwd=tree, capture_output=True, text=True,
                          timeout=BUILD_TIMEOUT, stdin=subprocess.DEVNULL)


def test_the_walkthrough_builds_and_runs(tmp_path, monkeypatch):
    steps = steps_of(WALKTHROUGH)
    assert {step.path for step in steps} >= {"protocol/fs.messages", "servers/fs/file_system_requests.c",
                                             "apps/shell/commands.c"}, steps
    tree = scratch_copy(tmp_path / "formica")

    apply(steps[0], tree)  # step 1: only the FS declaration
    assert steps[0].path == "protocol/fs.messages"
    first = make(tree, "build/out/bin/fs")
    assert first.returncode != 0, "the build with only the declaration should fail to link FS"
    assert "undefined reference to `fs_free_blocks'" in first.stdout + first.stderr, first.stderr[-3000:]

    for step in steps[1:]:
        apply(step, tree)
    built = make(tree, *BOOT_TARGETS)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-4000:]

    # the scratch tree has no project-local QEMU 10 of its own: boot the QEMU this tree would
    monkeypatch.setenv("FORMICA_QEMU", str(formica.qemu()))
    disk = tree / "build" / "out" / "disk.img"
    result = formica.client.run(["--smp", "2", "--accel", "tcg", "--disk", str(disk), "--cmd", "df"], 120,
                                runner=tree / "build" / "run")
    assert result.rc == 0, result.describe()
    counts = DF_LINE.search(result.text)
    assert counts, result.describe()
    assert int(counts.group(1)) > 0 and int(counts.group(2)) > 0, result.describe()
