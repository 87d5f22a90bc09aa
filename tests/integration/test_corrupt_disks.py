# Corrupted disks (issues 32 and 39, docs/ext2.md): one boot per class of damage on a copy
# of the build's ext3 image (errors=remount-ro): superblock counts, overlapping descriptors
# (and, on the 1 KiB ext2 image, an inode table on the superblock), an impossible inode
# size, a directory entry naming the journal's inode, a directory of size 0, a live inode
# and root's block marked free in the bitmaps, a broken journal superblock and a journal log
# with a tag whose home is the journal; a bad block the bitmap marks free and an inode-table
# block on the bad-block list, an unlink that meets a block marked free (ext3 and ext2:
# aborted, nothing of it on the disk), cross-linked files, a used block marked free, a
# directory whose first block is the root's, a
# version-1 journal superblock with version-2 fields, a logged copy over the journal's own
# inode, a file system larger than its disk and an image smaller than a superblock; and a
# 1 KiB-block file system whose last 4 KiB disk block is partial, written to its end. Each
# time FS names the problem, the shell runs every command to the end, and `e2fsck -fn` finds
# no damage after the boot that it did not find before it (corrupt_images.py). Then the
# error record: dumpe2fs sees it after the boot, and the next boot warns of it.
import subprocess

import pytest

from corrupt_images import RECIPES, base_image, boot, huge_size, judge


@pytest.mark.parametrize("recipe", RECIPES, ids=[recipe.name for recipe in RECIPES])
def test_corrupt_disk(built, tmp_path, recipe):
    image = base_image(tmp_path, source=recipe.source)
    result, failures = judge(image, recipe.corrupt, recipe.lines, recipe.commands, recipe.absent)
    assert not failures, f"{recipe.name}: {failures}\n{result.describe()}"


def test_error_record_reaches_the_disk(built, tmp_path):
    """The first inconsistency is recorded in the superblock as ext4 records it (through
    the journal, committed at once): dumpe2fs shows it, and the next boot warns."""
    image = base_image(tmp_path)
    result, failures = judge(image, huge_size, ["fs: the file system is now read-only"])
    assert not failures, f"{failures}\n{result.describe()}"
    header = subprocess.run(["dumpe2fs", "-h", str(image.path)], capture_output=True,
                            text=True).stdout
    for expected in ("Filesystem state:         clean with errors", "FS Error count:           1",
                     "First error function:     check_size",
                     f"First error inode #:      {image.inode_of('/hello.txt')}"):
        assert expected in header, header
    again = boot(image, "ls /; echo shell-finished")
    assert "fs: the superblock records errors (1 since the last check); run e2fsck" in again.text, \
        again.describe()
    assert "shell-finished" in again.text, again.describe()
