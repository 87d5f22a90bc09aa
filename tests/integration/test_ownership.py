# Ownership and fair sharing (issue 29, docs/authority.md): tests/programs/hostile, run as other users in
# accounts of their own, attacks another user's files, the pager's swap file, FS's handle table
# and the disk. Each attack is refused or contained, a disk-backed pager program of a third user
# outlives a full disk, and an ordinary program of another account keeps working (its time
# beside the attacks is measured against its undisturbed time); e2fsck -fn finds the disk clean.
import re
import shutil
import subprocess

import pytest

import formica
import disk_image  # noqa: E402 (build/, on the path through formica)

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 400
E_BUSY, E_NO_SPACE, E_QUOTA = -6, -17, -21
ACCOUNT_HANDLES = 512  # OPEN_FILES_PER_ACCOUNT (servers/fs/open_files.h): a quarter of 2,048
QUOTA_PERCENT = 40
NORMAL = "run --user 2004 hostile normal 40"  # the third account's ordinary program

# The victim (2002) makes its files, the swapper (2003) a disk-backed region; the attacker
# (2001) tries the files and the swap file, takes every handle its account may have, fills the
# disk up to its quota (during which the ordinary program runs), FS restarts and the quota
# holds; a second attacker (2005) fills the rest of the disk, after which a new disk-backed
# region is refused and the swapper, which stores its second half only now, still verifies.
COMMANDS = "; ".join([
    NORMAL,
    "run --user 2002 hostile victim",
    "start --user 2003 hostile swapper /disk.full",
    "run --user 2004 hostile await /swap",
    "run --user 2001 hostile owners",
    "start --user 2001 hostile handles 8000", "sleep 3000",
    NORMAL,
    "ls /",
    "start --user 2001 hostile fill /fill.2001 /quota.reached",
    NORMAL,
    "run --user 2004 hostile await /quota.reached",
    "kill fs", "sleep 1000",
    "run --user 2001 hostile fill /fill.again",
    "run --user 2005 hostile fill /fill.2005 /disk.full",
    "run --user 2004 hostile newregion",
    "wait",
    "ls -l /",
])


def small_image(path):
    """A 24 MiB ext3 image of build/disk with the build's owners (build/disk_image.py): small,
    so that filling it is quick."""
    disk_image.make(path, "ext3", 4096, "24M", journal_mib=4)


def test_attacks_on_files_handles_and_disk_are_contained(tmp_path):
    image = tmp_path / "disk.img"
    small_image(image)
    result = formica.run("--smp", "2", "--disk", str(image), "--append",
                         f"fs_quota={QUOTA_PERCENT}", "--cmd", COMMANDS, timeout=TIMEOUT)
    text = result.describe()
    cases = {}
    for case in result.kinds("hostile"):
        assert case["ok"], f"not refused as expected: {case}\n{text}"
        cases[case["case"]] = case
    assert {"read_private_file", "write_shared_file", "remove_from_sticky_root",
            "rename_over_anothers_file", "chown_anothers_file", "read_pager_swap_file",
            "victim_files_intact", "new_region_on_full_disk",
            "swapper_survived_full_disk"} <= set(cases), text

    # FS handles: the attacker's account got its share and no more; the table kept room.
    holders = result.kinds("hostile_handles")
    assert len(holders) == 6, text
    assert sum(holder["opened"] for holder in holders) == ACCOUNT_HANDLES, text
    assert {holder["error"] for holder in holders} <= {E_BUSY, E_QUOTA}, text
    assert any(holder["error"] == E_QUOTA for holder in holders), text
    assert "its account's share of handles is full" in result.text, text

    # The disk: the first attacker stopped at its quota, also after FS restarted.
    [quota_kib] = {int(kib) for kib in re.findall(r"fs: disk quota (\d+) KiB per user", result.text)}
    assert len(re.findall(r"fs: disk quota \d+ KiB per user", result.text)) == 2, text  # + restart
    fills = {fill["path"]: fill for fill in result.kinds("hostile_fill")}
    first, again, rest = fills["/fill.2001"], fills["/fill.again"], fills["/fill.2005"]
    assert first["error"] == again["error"] == rest["error"] == E_NO_SPACE, text
    assert quota_kib * 1024 - (1 << 20) < first["bytes"] <= quota_kib * 1024, text
    assert again["bytes"] == 0, text  # the restarted FS counted the first file again
    assert rest["bytes"] > 0, text
    assert "disk quota" in result.text and "uid 2001 refused" in result.text, text
    # The full disk refused a new region and ended no running program.
    assert "no disk space for pid" in result.text, text
    assert "has no backend copy" not in result.text, text
    [done] = [line for line in result.kinds("hostile_swapper") if line["phase"] == "done"]
    assert done["wrong_pages"] == 0 and done["swap_out_blocks"] > 0, text

    # The ordinary program of a third account kept working beside each attack. Its time is
    # printed; the bound is generous (a loaded host stretches any one run).
    normal = result.kinds("hostile_normal")
    assert len(normal) == 3 and all(run["ok"] for run in normal), text
    alone, beside_handles, beside_fill = (run["elapsed_ms"] for run in normal)
    print(f"ordinary program: {alone} ms alone, {beside_handles} ms beside the held handles, "
          f"{beside_fill} ms beside the disk filling")
    assert max(beside_handles, beside_fill) <= 8 * alone + 2000, text

    assert result.rc == 0, text
    check = subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
