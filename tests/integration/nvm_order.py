# nvm_order.py: replays the flush layer's recorded order (@json nvm_order
# lines, lib/nvm_order_record.c) line by line, as a cache would hold it: a
# write makes its 64-byte lines dirty, a flush takes what they hold, a fence
# makes that durable. Then it checks the pager's rule (docs/pager.md, "NVM"):
# every word that makes data reachable is stored only after that data is
# durable, and nothing is left undurable at the end:
#   - the header's magic (offset 0) after the rest of the header;
#   - a key's entry (its key word) after the entry's other fields and its map;
#   - a block's checksum after the block's bytes;
#   - a block's map entry (value: its unit) after the block's bytes and checksum.

LINE = 64


def records_of(lines, who="pager"):
    """The records of one dump, in order, from its nvm_order lines."""
    records = []
    for line in lines:
        if line.get("who") != who:
            continue
        if line["first"] != len(records):
            raise ValueError(f"nvm_order lines out of order: {line['first']} after {len(records)}")
        records += line["records"]
    return records


class Lines:
    """Per line: the sequence number of its last write, of the write its
    pending flush took, and of the write known durable."""

    def __init__(self):
        self.written, self.pending, self.durable = {}, {}, {}

    @staticmethod
    def of(offset, size):
        return range(offset // LINE, (offset + max(size, 1) - 1) // LINE + 1)

    def write(self, seq, offset, size):
        for line in self.of(offset, size):
            self.written[line] = seq

    def flush(self, offset, size):
        for line in self.of(offset, size):
            if line in self.written:
                self.pending[line] = self.written[line]

    def fence(self):
        for line, seq in self.pending.items():
            self.durable[line] = max(self.durable.get(line, -1), seq)
        self.pending.clear()

    def undurable(self, offset, size, require_written=False):
        """The lines of the range whose last write is not durable (or, with
        require_written, that were never written)."""
        bad = []
        for line in self.of(offset, size):
            seq = self.written.get(line)
            if seq is None:
                if require_written:
                    bad.append(line)
            elif self.durable.get(line, -1) < seq:
                bad.append(line)
        return bad


def check_pager_order(records, layout):
    """The problems found in `records` (a list of strings; empty when the
    order is right) for the key `layout` (the pager's nvm_layout line)."""
    unit, block_bytes, count = layout["unit_bytes"], layout["block_bytes"], layout["block_count"]
    header_bytes, entry = layout["header_bytes"], layout["entry_offset"]
    map_offset, sums_offset = layout["map_offset"], layout["sums_offset"]
    map_end = map_offset + 4 * count
    sums_end = sums_offset + 8 * count
    lines, problems = Lines(), []
    last_data = None  # (offset, size) of the latest block written

    def require(seq, what, ranges, require_written=False):
        for offset, size in ranges:
            bad = lines.undurable(offset, size, require_written)
            if bad:
                problems.append(f"record {seq}: {what} stored while bytes {offset}..{offset + size}"
                                f" were {'not yet written or ' if require_written else ''}not"
                                f" durable (lines {bad[:4]})")

    for seq, record in enumerate(records):
        kind = record[0]
        if kind == "s":
            lines.fence()
            continue
        offset, size = record[1], record[2]
        if kind == "f":
            lines.flush(offset, size)
            continue
        if offset == 0 and size == 8:
            require(seq, "the header's magic", [(8, header_bytes - 8)])
        elif offset == entry and size == 8 and record[3] != 0:
            require(seq, f"key {record[3]}'s entry",
                    [(entry + 8, 24), (map_offset, sums_end - map_offset)], require_written=True)
        elif sums_offset <= offset < sums_end and size == 8:
            if last_data is None:
                problems.append(f"record {seq}: a checksum stored before any block's bytes")
            else:
                require(seq, f"block {(offset - sums_offset) // 8}'s checksum", [last_data])
        elif map_offset <= offset < map_end and size == 4:
            block, target = (offset - map_offset) // 4, record[3]
            if target != 0xffffffff:
                require(seq, f"block {block}'s map entry (unit {target})",
                        [(target * unit, block_bytes), (sums_offset + 8 * block, 8)],
                        require_written=True)
        elif (size == block_bytes and offset % unit == 0 and offset >= header_bytes
              and not map_offset <= offset < sums_end):
            last_data = (offset, size)
        lines.write(seq, offset, size)
    left = [line for line, seq in lines.written.items() if lines.durable.get(line, -1) < seq]
    if left:
        problems.append(f"{len(left)} lines written and never made durable (first at byte"
                        f" {min(left) * LINE})")
    return problems


TAG_BLOCK_MASK = (1 << 48) - 1


def check_tier_order(records, layout):
    """The problems found in `records` for BLK's NVM tier (`layout`: its nvm_layout line;
    docs/storage.md, "The NVM tier"), replayed from a fresh format:
      - a tag that names a block in a line that was free (a fill, a write into a new line)
        only after the line's bytes are durable;
      - a tag never renames its line to another block without freeing it first;
      - bytes written into a named line only while its tag says dirty, durably;
      - nothing left undurable at the end."""
    tags, lines_at = layout["tags_offset"], layout["lines_offset"]
    count, line_bytes = layout["lines"], layout["line_bytes"]
    tags_end, lines_end = tags + 8 * count, lines_at + count * line_bytes
    tag = {}  # line -> the value last written to its tag (absent: not known)
    lines, problems = Lines(), []

    for seq, record in enumerate(records):
        kind = record[0]
        if kind == "s":
            lines.fence()
            continue
        offset, size = record[1], record[2]
        if kind == "f":
            lines.flush(offset, size)
            continue
        if tags <= offset < tags_end and size == 8:
            line, value = (offset - tags) // 8, record[3]
            before = tag.get(line)
            data = (lines_at + line * line_bytes, line_bytes)
            if value and before == 0 and lines.undurable(*data, require_written=True):
                problems.append(f"record {seq}: line {line}'s tag names block "
                                f"{value & TAG_BLOCK_MASK} before its bytes are durable")
            if value and before and (value & TAG_BLOCK_MASK) != (before & TAG_BLOCK_MASK):
                problems.append(f"record {seq}: line {line}'s tag renamed from block "
                                f"{before & TAG_BLOCK_MASK} to {value & TAG_BLOCK_MASK}")
            tag[line] = value
        elif tags <= offset < tags_end:  # a format's fill of the tags: every one free
            for line in range((offset - tags) // 8, min(count, (offset - tags + size) // 8)):
                tag[line] = 0
        elif lines_at <= offset < lines_end:
            line = (offset - lines_at) // line_bytes
            value = tag.get(line)
            state = (value >> 48) & 3 if value else 0
            if value and state != 2:
                problems.append(f"record {seq}: bytes written into line {line}, whose tag says "
                                f"clean")
            elif value and lines.undurable(tags + 8 * line, 8):
                problems.append(f"record {seq}: bytes written into line {line} before its dirty "
                                f"tag was durable")
        lines.write(seq, offset, size)
    left = [line for line, seq in lines.written.items() if lines.durable.get(line, -1) < seq]
    if left:
        problems.append(f"{len(left)} lines written and never made durable (first at byte"
                        f" {min(left) * LINE})")
    return problems
