#!/usr/bin/env python3
# build/linux/make_initramfs.py: writes the Linux guest's initramfs, a gzip'd cpio
# archive (the "newc" format the kernel unpacks), with busybox-static as /bin/busybox,
# the static Bonnie as /bin/bonnie, build/linux/init as /init, and the kernel modules
# that ext2 on virtio-blk needs (virtio_pci, virtio_blk, ext4 and what they depend on,
# found from each module's .modinfo "depends=") under /modules, load order in
# /modules/order; with --program NAME=PATH also other static programs as /apps/NAME
# (sort and memseq), and zram for the swap comparison (docs/pager.md).
# Written in Python so no cpio tool is needed.
import argparse
import gzip
import io
from pathlib import Path

# zram: compressed swap in memory, for the pager comparison. (Its swap on NBD is QEMU's NBD
# client behind a virtio-blk disk, as Formica's block backend uses: busybox has no nbd-client.)
# nfit, nd_pmem, dm_mod and dm_writecache: ext4 on dm-writecache over an NVDIMM, the NVM
# tier's comparison (make bench-vems, docs/storage.md).
WANTED_MODULES = ["virtio_pci", "virtio_blk", "ext4", "crc32c_generic", "zram",
                  "nfit", "nd_pmem", "dm_mod", "dm_writecache"]


def module_paths(kernel_tree):
    """Module name -> path of its .ko in the unpacked linux-image package."""
    paths = {}
    for path in Path(kernel_tree).glob("lib/modules/*/kernel/**/*.ko"):
        paths[path.stem.replace("-", "_")] = path
    return paths


def module_depends(path):
    """The names in the module's modinfo `depends=` string."""
    data = path.read_bytes()
    start = data.find(b"\0depends=")
    if start < 0:
        return []
    end = data.index(b"\0", start + 1)
    text = data[start + len(b"\0depends="):end].decode()
    return [name.replace("-", "_") for name in text.split(",") if name]


def load_order(paths, wanted):
    """Modules to insmod, dependencies first."""
    order, seen = [], set()

    def visit(name):
        if name in seen or name not in paths:
            return  # built in, or already placed
        seen.add(name)
        for dependency in module_depends(paths[name]):
            visit(dependency)
        order.append(name)

    for name in wanted:
        visit(name)
    return order


class Cpio:
    """A newc cpio archive in memory."""

    def __init__(self):
        self.buffer = io.BytesIO()
        self.inode = 1

    def _entry(self, name, mode, data=b""):
        fields = [self.inode, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name) + 1, 0]
        self.inode += 1
        header = b"070701" + b"".join(b"%08X" % field for field in fields)
        self.buffer.write(header + name.encode() + b"\0")
        self._pad()
        self.buffer.write(data)
        self._pad()

    def _pad(self):
        self.buffer.write(b"\0" * (-self.buffer.tell() % 4))

    def directory(self, name):
        self._entry(name, 0o040755)

    def file(self, name, data, executable=False):
        self._entry(name, 0o100755 if executable else 0o100644, data)

    def finish(self):
        self._entry("TRAILER!!!", 0)
        return self.buffer.getvalue()


def main():
    parser = argparse.ArgumentParser(description="build the Linux guest's initramfs")
    parser.add_argument("--kernel-tree", required=True)
    parser.add_argument("--busybox", required=True)
    parser.add_argument("--bonnie", required=True)
    parser.add_argument("--init", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--program", action="append", default=[], metavar="NAME=PATH",
                        help="another static program, installed as /apps/NAME (not /bin: busybox has a sort)")
    arguments = parser.parse_args()
    paths = module_paths(arguments.kernel_tree)
    modules = load_order(paths, WANTED_MODULES)
    archive = Cpio()
    for directory in ["bin", "sbin", "usr", "usr/bin", "usr/sbin", "proc", "sys", "dev", "mnt", "modules", "apps"]:
        archive.directory(directory)
    archive.file("bin/busybox", Path(arguments.busybox).read_bytes(), executable=True)
    archive.file("bin/bonnie", Path(arguments.bonnie).read_bytes(), executable=True)
    archive.file("init", Path(arguments.init).read_bytes(), executable=True)
    for program in arguments.program:
        name, path = program.split("=", 1)
        archive.file(f"apps/{name}", Path(path).read_bytes(), executable=True)
    for name in modules:
        archive.file(f"modules/{name}.ko", paths[name].read_bytes())
    archive.file("modules/order", "".join(f"{name}.ko\n" for name in modules).encode())
    Path(arguments.output).write_bytes(gzip.compress(archive.finish(), compresslevel=6))
    print(f"build/linux: {arguments.output}: modules {' '.join(modules)}")


if __name__ == "__main__":
    main()
