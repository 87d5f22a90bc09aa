# Corrupting ext3 images and judging a boot on one (issue 32, docs/ext2.md "Corrupted
# disks"): the recipes (one per class: superblock, descriptors, inodes, directories,
# bitmaps, the bad-block list, journal superblock, journal log, the disk's size), the
# shell commands a user would run, and the three checks: FS names the problem, the shell
# finishes, and `e2fsck -fn` finds no problem after the boot that it did not find before.
# Used by test_corrupt_disks.py (fixed recipes) and test_fuzz_images.py (a seeded random
# campaign, `make fuzz-images`).
import dataclasses
import random
import re
import shutil
import struct
import subprocess

from formica import OUT_DIR, run
import disk_image  # noqa: E402 (build/, on the path through formica)

BOOT_TIMEOUT = 150
COMMANDS = ("ls /; ls /docs; cat /hello.txt; stat /hello.txt; cksum /hello.txt; mkdir /m1; "
            "mkdir /docs/m2; cp /hello.txt /m1/c; rm /m1/c; sync; echo shell-finished")
SUPERBLOCK = 1024


class Image:
    """An ext3 image file, with the few layout facts the recipes need."""

    def __init__(self, path):
        self.path = path
        superblock = self.read(SUPERBLOCK, 1024)
        (self.inodes_count, self.blocks_count) = struct.unpack_from("<II", superblock, 0)
        self.first_data_block, log_block = struct.unpack_from("<II", superblock, 20)
        self.block_size = 1024 << log_block
        self.inodes_per_group = struct.unpack_from("<I", superblock, 40)[0]
        self.inode_size = struct.unpack_from("<H", superblock, 88)[0]
        self.descriptors = (self.first_data_block + 1) * self.block_size

    def read(self, offset, length):
        with open(self.path, "rb") as disk:
            disk.seek(offset)
            return disk.read(length)

    def write(self, offset, data):
        with open(self.path, "r+b") as disk:
            disk.seek(offset)
            disk.write(data)

    def u32(self, offset, value=None):
        if value is not None:
            self.write(offset, struct.pack("<I", value))
        return struct.unpack("<I", self.read(offset, 4))[0]

    def descriptor(self, group, field):
        """Offset of a group descriptor's field (0 block bitmap, 4 inode bitmap, 8 table)."""
        return self.descriptors + group * 32 + field

    def inode_offset(self, number):
        group, index = divmod(number - 1, self.inodes_per_group)
        table = self.u32(self.descriptor(group, 8))
        return table * self.block_size + index * self.inode_size

    def debugfs(self, request):
        return subprocess.run(["debugfs", "-R", request, str(self.path)], capture_output=True,
                              text=True, errors="replace").stdout

    def inode_of(self, path):
        return int(re.search(r"Inode: (\d+)", self.debugfs(f"stat {path}")).group(1))

    def block_of(self, inode, logical=0):
        return int(self.debugfs(f"bmap <{inode}> {logical}").split()[0])

    def clear_bit(self, bitmap_block, bit):
        offset = bitmap_block * self.block_size + bit // 8
        byte = self.read(offset, 1)[0]
        self.write(offset, bytes([byte & ~(1 << (bit % 8))]))

    def bit_is_set(self, bitmap_block, bit):
        return bool(self.read(bitmap_block * self.block_size + bit // 8, 1)[0] & (1 << (bit % 8)))

    def first_free_block(self):
        """The first block group 0's bitmap marks free."""
        bitmap = self.u32(self.descriptor(0, 0))
        bit = next(bit for bit in range(8 * self.block_size) if not self.bit_is_set(bitmap, bit))
        return self.first_data_block + bit

    def first_free_inode(self):
        bitmap = self.u32(self.descriptor(0, 4))
        return 1 + next(bit for bit in range(self.inodes_per_group)
                        if not self.bit_is_set(bitmap, bit))

    def inode_table_block(self, number):
        return self.inode_offset(number) // self.block_size

    def list_bad_blocks(self, blocks):
        """Inode 1's list becomes `blocks` (direct pointers, as e2fsck -l writes a short
        list), the bitmaps left as they are."""
        commands = [f"sif <1> block[{i}] {block}" for i, block in enumerate(blocks)]
        commands += [f"sif <1> size {len(blocks) * self.block_size}",
                     f"sif <1> blocks {len(blocks) * self.block_size // 512}"]
        subprocess.run(["debugfs", "-w", "-f", "-", str(self.path)], check=True,
                       capture_output=True, text=True, input="\n".join(commands) + "\n")


def base_image(tmp_path, name="base.img", source="disk.img"):
    """A copy of one of the build's images: disk.img (ext3, 4 KiB blocks) or disk-1k.img
    (ext2, 1 KiB blocks), both errors=remount-ro."""
    image = tmp_path / name
    shutil.copyfile(OUT_DIR / source, image)
    return Image(image)


def problem_of(line):
    """A problem line as compared before and after. Files made during the boot change
    counts and the paths e2fsck names an inode by, so a wrong count is kept as how far it
    is off, and a path in parentheses is left out; the blocks a damaged tree lists are
    kept as the kind of problem and its inode."""
    line = re.sub(r"\((\d+), counted=(\d+)\)",
                  lambda m: f"(off by {int(m.group(1)) - int(m.group(2))})", line)
    # A damaged block tree lists the junk e2fsck reads through it, which changes when FS
    # writes what a junk pointer names (the journal, the superblock): kept as its kind.
    line = re.sub(r"^Illegal block #\d+ \(\d+\) in inode (\d+)", r"Illegal blocks in inode \1", line)
    line = re.sub(r"^Block #\d+ \(\d+\) causes directory to be too big",
                  "Blocks cause a directory to be too big", line)
    line = re.sub(r"now = [^)]*\)", "now)", line)  # "... is in the future" names the clock
    line = re.sub(r"ref count is (\d+), should be (\d+)",
                  lambda m: f"ref count off by {int(m.group(1)) - int(m.group(2))}", line)
    return re.sub(r"\(/[^)]*\)", "(path)", line)


def fsck_problems(image):
    """The problems `e2fsck -fn` reports, without its progress and summary lines."""
    completed = subprocess.run(["e2fsck", "-fn", str(image.path)], capture_output=True,
                               text=True, errors="replace")  # damaged names are any bytes
    skipped = ("e2fsck ", "Pass ", "Fix? ", "Warning: skipping journal")
    summary = re.compile(r"^\S+: (\d+/\d+ files|\*+ WARNING: Filesystem still has errors)")
    return {problem_of(line.strip()) for line in completed.stdout.splitlines()
            if line.strip() and not line.startswith(skipped) and not summary.match(line)}


def boot(image, commands=COMMANDS):
    return run("--smp", "3", "--disk", str(image.path), "--cmd", commands,
               "--timeout", str(BOOT_TIMEOUT), timeout=BOOT_TIMEOUT + 60)


def judge(image, corrupt, expected_lines=(), commands=COMMANDS, absent_lines=()):
    """Corrupts the image, boots on it, and checks the three promises (and that none of
    `absent_lines` is printed); returns the Run and a list of what failed (empty when all
    held)."""
    corrupt(image)
    before = fsck_problems(image)
    result = boot(image, commands)
    failures = []
    if "shell-finished" not in result.text:
        failures.append("the shell did not finish")
    if re.search(r"PANIC on core|\) killed by |init: \S+( \d+/\d+)? \(pid \d+\) ended with code",
                 result.text):
        failures.append("a kernel panic, a process killed by a fault, or a server restart")
    for line in expected_lines:
        if line not in result.text:
            failures.append(f"no line {line!r}")
    for line in absent_lines:
        if line in result.text:
            failures.append(f"a line {line!r}")
    new = fsck_problems(image) - before
    if new:
        failures.append(f"new damage after the boot: {sorted(new)}")
    return result, failures


@dataclasses.dataclass
class Recipe:
    """A fixed recipe: its name, corrupt(image), the lines FS must print, the build image
    it copies, the shell's commands and lines that must not appear."""
    name: str
    corrupt: object
    lines: list
    source: str = "disk.img"
    commands: str = COMMANDS
    absent: tuple = ()


def superblock_counts(image):
    image.u32(SUPERBLOCK, image.inodes_count + 1)


def descriptors_overlap(image):
    table = image.u32(image.descriptor(0, 8))
    image.u32(image.descriptor(0, 4), table + 1)


def inode_table_on_superblock(image):
    image.u32(image.descriptor(0, 8), 1)


def huge_size(image):
    image.u32(image.inode_offset(image.inode_of("/hello.txt")) + 108, 1 << 12)


def huge_size_errors_panic(image):
    subprocess.run(["tune2fs", "-e", "panic", str(image.path)], check=True, capture_output=True)
    huge_size(image)


def reserved_inode_named(image):
    root = image.block_of(2) * image.block_size
    block = bytearray(image.read(root, image.block_size))
    offset = 0
    while offset < len(block):
        inode, length, name_length = struct.unpack_from("<IHB", block, offset)
        if block[offset + 8:offset + 8 + name_length] == b"hello.txt":
            struct.pack_into("<I", block, offset, 8)  # the journal's inode
            break
        offset += length
    image.write(root, bytes(block))


def directory_size_zero(image):
    image.u32(image.inode_offset(image.inode_of("/docs")) + 4, 0)


def live_inode_marked_free(image):
    inode = image.inode_of("/hello.txt")
    image.clear_bit(image.u32(image.descriptor(0, 4)), inode - 1)


def root_block_marked_free(image):
    block = image.block_of(2)
    image.clear_bit(image.u32(image.descriptor(0, 0)), block - image.first_data_block)


def journal_superblock(image):
    image.write(image.block_of(8) * image.block_size, b"XXXX")


def journal_log_bad_tag(image):
    """A committed transaction (debugfs) logging a block whose home is the journal."""
    home = image.block_of(8, 20)
    zero = image.path.with_suffix(".zero")
    zero.write_bytes(bytes(image.block_size))
    subprocess.run(["debugfs", "-w", str(image.path), "-f", "-"], check=True,
                   capture_output=True, text=True,
                   input=f"jo\njw -b {home} {zero}\njc\n")


def bad_block_marked_free(image):
    """The block mkdir would take is on the bad-block list, the bitmap marks it free."""
    image.list_bad_blocks([image.first_free_block()])


def inode_table_block_on_bad_block_list(image):
    """The first inode-table block holding no live inode is on the bad-block list, its
    inodes marked free, and the free inodes before it marked in use (so that mkdir's
    next inode lies in the bad block)."""
    per_block = image.block_size // image.inode_size
    first_free = image.first_free_inode()
    clean = -(-(first_free - 1) // per_block) * per_block + 1  # the next block's first inode
    commands = [f"seti <{number}>" for number in range(first_free, clean)]
    subprocess.run(["debugfs", "-w", "-f", "-", str(image.path)], check=True,
                   capture_output=True, text=True, input="\n".join(commands) + "\n")
    image.list_bad_blocks([image.inode_table_block(clean)])


def file_block_marked_free(image):
    """A block of /data/numbers.txt marked free: its rm meets it after freeing others."""
    inode = image.inode_of("/data/numbers.txt")
    block = image.block_of(inode, 3)
    image.clear_bit(image.u32(image.descriptor(0, 0)), block - image.first_data_block)


def cross_linked_files(image):
    """/README.txt's first block is /hello.txt's (e2fsprogs' f_dup): its rm must not
    free the block /hello.txt still uses."""
    readme = image.inode_of("/README.txt")
    image.u32(image.inode_offset(readme) + 40, image.block_of(image.inode_of("/hello.txt")))


def used_block_marked_free(image):
    """/hello.txt's block marked free in the bitmap: the next allocation must not take it."""
    block = image.block_of(image.inode_of("/hello.txt"))
    image.clear_bit(image.u32(image.descriptor(0, 0)), block - image.first_data_block)


def directory_block_of_root(image):
    """/docs's first block is the root's (its '.' names inode 2)."""
    docs = image.inode_of("/docs")
    image.u32(image.inode_offset(docs) + 40, image.block_of(2))


def journal_superblock_v1_with_v2_fields(image):
    """A committed transaction (debugfs) in a journal whose superblock says version 1 but
    still carries version 2's features and users."""
    free = image.first_free_block()
    zero = image.path.with_suffix(".zero")
    zero.write_bytes(bytes(image.block_size))
    subprocess.run(["debugfs", "-w", str(image.path), "-f", "-"], check=True,
                   capture_output=True, text=True, input=f"jo\njw -b {free} {zero}\njc\n")
    image.write(image.block_of(8) * image.block_size + 4, struct.pack(">I", 3))


def journal_log_over_journal_inode(image):
    """A committed transaction logging zeros for the inode-table block that holds the
    journal's own inode (and root's)."""
    home = image.inode_table_block(8)
    zero = image.path.with_suffix(".zero")
    zero.write_bytes(bytes(image.block_size))
    subprocess.run(["debugfs", "-w", str(image.path), "-f", "-"], check=True,
                   capture_output=True, text=True, input=f"jo\njw -b {home} {zero}\njc\n")


def larger_than_the_disk(image):
    with open(image.path, "r+b") as disk:
        disk.truncate(image.blocks_count * image.block_size - 3 * 1024)


def smaller_than_a_superblock(image):
    with open(image.path, "r+b") as disk:
        disk.truncate(1536)


def blocks_of_a_file(data_blocks):
    """Blocks a file of that many 1 KiB data blocks takes with its indirect blocks."""
    indirect = (data_blocks > 12) + (data_blocks > 12 + 256) * (1 + (data_blocks - 12 - 256 + 255) // 256)
    return data_blocks + indirect


def partial_last_4k_block(image):
    """Not damage: a 1 KiB-block ext2 of 8193 blocks (its last 4 KiB disk block holds one
    of them) whose only free blocks are the last three, which mkdir, mkdir and cp take."""
    disk_image.make(image.path, "ext2", 1024, "8193", errors="remount-ro", reserved_percent=0)
    free = int(re.search(r"Free blocks:\s+(\d+)", subprocess.run(
        ["dumpe2fs", "-h", str(image.path)], capture_output=True, text=True).stdout).group(1))
    data = max(n for n in range(free) if blocks_of_a_file(n) <= free - 3)
    filler = image.path.with_suffix(".filler")  # debugfs writes it from the first free block
    filler.write_bytes(b"\xaa" * (data * 1024))  # not zeros, which debugfs leaves as holes
    subprocess.run(["debugfs", "-w", "-R", f"write {filler} filler", str(image.path)],
                   check=True, capture_output=True)


RECIPES = [
    Recipe("superblock", superblock_counts,
           ["fs: corrupt: superblock: inode count does not match the groups",
            "fs: cannot mount the disk: corrupt"]),
    Recipe("descriptors", descriptors_overlap,
           ["fs: corrupt: a group's block bitmap, inode bitmap and inode table overlap"]),
    Recipe("1k inode table on the superblock", inode_table_on_superblock,
           ["fs: corrupt: a group's bitmaps or inode table overlap the superblock or group "
            "descriptors", "fs: cannot mount the disk: corrupt"], "disk-1k.img"),
    Recipe("inode size", huge_size,
           ["fs: corrupt: an inode's size is beyond the largest file",
            "fs: the file system is now read-only"]),
    Recipe("errors=panic", huge_size_errors_panic,
           ["fs: corrupt: an inode's size is beyond the largest file",
            "fs: errors=panic: FS stops serving the disk"]),
    Recipe("reserved inode", reserved_inode_named,
           ["fs: corrupt: a directory entry names a reserved inode"]),
    Recipe("directory size 0", directory_size_zero, ["fs: corrupt: a directory's size is 0"]),
    Recipe("live inode free", live_inode_marked_free,
           ["fs: corrupt: the inode bitmap marks a live inode free"]),
    Recipe("root block free", root_block_marked_free,
           ["fs: corrupt: the block bitmap marks a block of the root directory free"]),
    Recipe("journal superblock", journal_superblock,
           ["fs: the ext3 journal is corrupt: no journal superblock in inode 8",
            "fs: mounted read-only: the journal is corrupt"]),
    Recipe("journal log", journal_log_bad_tag,
           ["fs: the ext3 journal is corrupt: a logged block lies in the journal itself",
            "fs: mounted read-only"]),
    Recipe("bad block free", bad_block_marked_free,
           ["fs: corrupt: the block bitmap marks a block of the bad-block list free",
            "fs: the file system is now read-only"]),
    Recipe("inode in a bad block", inode_table_block_on_bad_block_list,
           ["fs: corrupt: the inode bitmap marks free an inode that lies in a bad block"]),
    Recipe("unlink aborted", file_block_marked_free,
           ["fs: corrupt: freeing a block the bitmap marks free",
            "rm: /data/numbers.txt: corrupt file system"],
           commands="rm /data/numbers.txt; cksum /data/numbers.txt; " + COMMANDS),
    Recipe("1k unlink aborted", file_block_marked_free,
           ["fs: corrupt: freeing a block the bitmap marks free"], "disk-1k.img",
           commands="rm /data/numbers.txt; cksum /data/numbers.txt; " + COMMANDS),
    Recipe("cross-linked files", cross_linked_files,
           ["fs: 1 blocks are claimed by two files (cross-linked): they are never freed",
            "fs: corrupt: freeing a block another file also claims",
            "Hello from Formica's disk."],
           commands="rm /README.txt; " + COMMANDS),
    Recipe("used block free", used_block_marked_free,
           ["fs: corrupt: the block bitmap marks free a block a file claims"]),
    Recipe("directory dots", directory_block_of_root,
           ["fs: corrupt: a directory's first entry is not '.' naming the directory"]),
    Recipe("journal superblock v1", journal_superblock_v1_with_v2_fields,
           ["fs: the ext3 journal is corrupt: the journal superblock is version 1 but carries "
            "version-2 fields", "fs: mounted read-only: the journal is corrupt"]),
    Recipe("journal log over the journal inode", journal_log_over_journal_inode,
           ["fs: the ext3 journal is corrupt: a logged inode table block changes the journal's "
            "own inode", "fs: mounted read-only: the journal is corrupt"]),
    Recipe("larger than the disk", larger_than_the_disk,
           ["fs: corrupt: superblock: the file system is larger than the disk",
            "fs: cannot mount the disk: corrupt"], "disk-1k.img"),
    Recipe("smaller than a superblock", smaller_than_a_superblock,
           ["fs: corrupt: the disk is too small to hold a superblock",
            "fs: cannot mount the disk: corrupt"]),
    Recipe("partial last 4 KiB block", partial_last_4k_block,
           ["(the last one partial)", "shell-finished"], "disk-1k.img",
           commands=COMMANDS.replace("; sync;", "; cp /hello.txt /m1/d; cksum /m1/d; ls /docs; sync;"),
           absent=("block outside the disk", "mkdir: ", "cp: ", "cksum: ", "fs: corrupt")),
]


# The random campaign's damage: bit flips in one region of the image.
def random_region(image, rng):
    """(class, offset, length) of a region the recipe may flip bits in."""
    block = image.block_size
    kind = rng.choice(["superblock", "descriptors", "inode", "directory", "bitmap",
                       "bad-block list", "journal superblock", "journal log"])
    if kind == "superblock":
        return kind, SUPERBLOCK, 256
    if kind == "descriptors":
        return kind, image.descriptors, 32
    if kind == "inode":
        number = rng.choice([2, 8, image.inode_of("/hello.txt"), image.inode_of("/docs"),
                             image.inode_of("/README.txt")])
        return kind, image.inode_offset(number), 128
    if kind == "directory":
        inode = rng.choice([2, image.inode_of("/docs"), image.inode_of("/data")])
        return kind, image.block_of(inode) * block, 256
    if kind == "bitmap":
        field = rng.choice([0, 4])
        return kind, image.u32(image.descriptor(0, field)) * block, 64
    if kind == "bad-block list":  # inode 1: its block pointers, size and counts
        return kind, image.inode_offset(1), 128
    if kind == "journal superblock":  # its version fields too (s_nr_users at 0x40)
        return kind, image.block_of(8) * block, 72
    journal_log_bad_tag(image)  # a committed transaction to damage
    return kind, image.block_of(8, 1) * block, 64


def random_damage(image, seed):
    """Flips 1 to 8 random bits (or writes one extreme 32-bit value) in a random region;
    returns a description."""
    rng = random.Random(seed)
    kind, offset, length = random_region(image, rng)
    if rng.random() < 0.25:
        at = offset + rng.randrange(0, length // 4) * 4
        value = rng.choice([0, 1, 7, 8, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF])
        image.u32(at, value)
        return f"seed {seed}: {kind}: u32 {value:#x} at byte {at}"
    flips = []
    for _ in range(rng.randint(1, 8)):
        at = offset + rng.randrange(length)
        bit = rng.randrange(8)
        image.write(at, bytes([image.read(at, 1)[0] ^ (1 << bit)]))
        flips.append(f"{at}.{bit}")
    return f"seed {seed}: {kind}: bits {' '.join(flips)}"
