#!/usr/bin/env python3
# bonnie_replay.py: the host-side replay of Bonnie's random test (apps/bonnie,
# docs/bonnie.md): same splitmix64 sequence as apps/bonnie/bonnie_random.h,
# giving the file's expected final bytes, or the sequence itself for tests.
import argparse
import sys

MASK = (1 << 64) - 1
CHILD_MIX = 0xD1B54A32D192ED03
GOLDEN_GAMMA = 0x9E3779B97F4A7C15
SLOT_BYTES = 16


class BonnieRandom:
    """splitmix64 seeded per child: state = seed ^ (CHILD_MIX * (child + 1))."""

    def __init__(self, seed, child):
        self.state = (seed ^ (CHILD_MIX * (child + 1))) & MASK

    def next(self):
        self.state = (self.state + GOLDEN_GAMMA) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def reference(self, chunks, update_pct):
        """(chunk, update, pattern bytes or None), as bonnie_next_reference."""
        chunk = self.next() % chunks
        update = self.next() % 100 < update_pct
        if not update:
            return chunk, False, None
        pattern = self.next().to_bytes(8, "little") + self.next().to_bytes(8, "little")
        return chunk, True, pattern


def fill_byte(offset):
    return ((offset % 251) ^ (offset >> 12)) & 0xFF


def initial_file(file_bytes):
    return bytearray(fill_byte(offset) for offset in range(file_bytes))


def final_file(procs, file_bytes, refs, update_pct, chunk, seed):
    """The file after every child's references: child c's last update of a
    chunk owns bytes [16c, 16c + 16) of it; nothing else changes."""
    data = initial_file(file_bytes)
    chunks = file_bytes // chunk
    for child in range(procs):
        random = BonnieRandom(seed, child)
        for _ in range(refs):
            index, update, pattern = random.reference(chunks, update_pct)
            if update:
                start = index * chunk + child * SLOT_BYTES
                data[start:start + SLOT_BYTES] = pattern
    return data


def parse_size(text):
    text = text.strip()
    scale = {"k": 1024, "m": 1024 * 1024}.get(text[-1:].lower(), 1)
    return int(text[:-1] if scale > 1 else text, 0) * scale


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-p", type=int, default=1, dest="procs")
    parser.add_argument("-s", type=parse_size, default=128 * 1024, dest="file_bytes")
    parser.add_argument("-n", type=int, default=4000, dest="refs")
    parser.add_argument("-u", type=int, default=10, dest="update_pct")
    parser.add_argument("-c", type=parse_size, default=4096, dest="chunk")
    parser.add_argument("--seed", type=lambda text: int(text, 0), default=1)
    parser.add_argument("-o", "--output", help="write the expected file here")
    parser.add_argument("--print-sequence", type=int, metavar="COUNT",
                        help="print COUNT raw values of child --child, then COUNT references")
    parser.add_argument("--child", type=int, default=0)
    args = parser.parse_args(argv)
    if args.print_sequence is not None:
        random = BonnieRandom(args.seed, args.child)
        for _ in range(args.print_sequence):
            print(f"{random.next():016x}")
        random = BonnieRandom(args.seed, args.child)
        for _ in range(args.print_sequence):
            index, update, pattern = random.reference(args.file_bytes // args.chunk, args.update_pct)
            print(f"{index} {int(update)} {pattern.hex() if pattern else '-'}")
        return 0
    data = final_file(args.procs, args.file_bytes, args.refs, args.update_pct, args.chunk, args.seed)
    if args.output:
        with open(args.output, "wb") as output:
            output.write(data)
    else:
        sys.stdout.buffer.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
