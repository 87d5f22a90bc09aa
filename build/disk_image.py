#!/usr/bin/env python3
# build/disk_image.py: the one way to make a Formica disk image of build/disk/ with e2fsprogs, for
# build/disk.mk and for every test and benchmark that makes its own image. mke2fs -d copies the
# files with the builder's owners and a root-owned 0755 root directory, where the shell's user
# could create nothing; debugfs then gives every file to the console user
# (USER_CONSOLE:GROUP_USERS of formica/users.h, whoever builds) and makes the root directory
# root's 1777 (sticky, like /tmp: every user creates files in `/`, only a name's owner removes it;
# docs/authority.md). A command debugfs refuses fails the image.
#   python3 build/disk_image.py --type ext3 --block-size 4096 --size 64M --journal-mib 4 OUT.img
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "build" / "disk"
USERS_HEADER = REPO / "lib" / "include" / "formica" / "users.h"
ROOT_MODE = "041777"  # a directory, sticky, world-writable
LABEL = "formica"


def users_header_value(name):
    """A `#define NAME N` of formica/users.h, so the owner is declared in one place."""
    match = re.search(rf"^#define {name} (\d+)", USERS_HEADER.read_text(), re.MULTILINE)
    if match is None:
        raise SystemExit(f"disk_image: no #define {name} in {USERS_HEADER}")
    return int(match.group(1))


def owner_commands(source=SOURCE):
    """debugfs commands: the root directory 1777, every file and folder of `source` the
    console user's."""
    uid, gid = users_header_value("USER_CONSOLE"), users_header_value("GROUP_USERS")
    commands = [f"set_inode_field / mode {ROOT_MODE}"]
    for path in sorted(Path(source).rglob("*")):
        name = "/" + path.relative_to(source).as_posix()
        commands += [f"set_inode_field {name} uid {uid}", f"set_inode_field {name} gid {gid}"]
    return commands


def make(image, fs_type="ext3", block_size=4096, size="64M", journal_mib=None, errors=None,
         source=SOURCE, reserved_percent=None):
    """Makes `image` (replacing it): `fs_type` ext2 or ext3, `block_size` bytes, `size` as mke2fs
    reads it ("64M", or a count of blocks), an ext3 journal of `journal_mib` MiB (None: mke2fs's
    default), `errors` the superblock's s_errors (continue, remount-ro or panic; None: mke2fs's
    default), `reserved_percent` the blocks kept for root (None: mke2fs's 5 %)."""
    image = Path(image)
    image.parent.mkdir(parents=True, exist_ok=True)
    image.unlink(missing_ok=True)
    options = ["-q", "-F", "-t", fs_type, "-r", "1", "-b", str(block_size), "-L", LABEL,
               "-E", "root_owner=0:0", "-d", str(source)]
    if journal_mib is not None:
        options += ["-J", f"size={journal_mib}"]
    if errors is not None:
        options += ["-e", errors]
    if reserved_percent is not None:
        options += ["-m", str(reserved_percent)]
    run([os.environ.get("MKE2FS", "mke2fs"), *options, str(image), size])
    # debugfs reports a refused command on stderr and still exits 0
    done = run([os.environ.get("DEBUGFS", "debugfs"), "-w", "-f", "-", str(image)],
               "\n".join(owner_commands(source)) + "\n")
    refused = [line for line in done.stderr.splitlines()
               if line.strip() and not line.startswith("debugfs ")]  # all but its banner
    if refused:
        raise SystemExit(f"disk_image: debugfs refused owner commands on {image}: {refused[:5]}")
    return image


def run(argv, stdin=None):
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"disk_image: {' '.join(argv)} failed ({done.returncode}):\n"
                         f"{done.stdout}{done.stderr}")
    return done


def main():
    parser = argparse.ArgumentParser(description="a Formica disk image of build/disk/")
    parser.add_argument("image")
    parser.add_argument("--type", default="ext3", choices=["ext2", "ext3"])
    parser.add_argument("--block-size", type=int, default=4096, choices=[1024, 2048, 4096])
    parser.add_argument("--size", default="64M")
    parser.add_argument("--journal-mib", type=int)
    parser.add_argument("--errors", choices=["continue", "remount-ro", "panic"])
    arguments = parser.parse_args()
    make(arguments.image, arguments.type, arguments.block_size, arguments.size,
         arguments.journal_mib, arguments.errors)


if __name__ == "__main__":
    sys.exit(main())
