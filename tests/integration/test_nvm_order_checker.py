# The ordering checker (nvm_order.py) on hand-written traces in the pager's and the tier's
# layouts: the order each uses passes; each way of breaking it is found.
# No QEMU.
from nvm_order import check_pager_order, check_tier_order, records_of

LAYOUT = {"key": 7, "header_bytes": 1048, "entry_offset": 24, "map_offset": 4096,
          "sums_offset": 4112, "block_bytes": 4096, "block_count": 2, "unit_bytes": 4096}


def persisted(offset, size, value=0):
    return [["w", offset, size, value], ["f", offset, size], ["s"]]


def format_and_key():
    return (persisted(0, 1048) + persisted(0, 8, 0x314d564e4d524f46)
            + [["w", 4096, 4096, 0], ["f", 4096, 4096]] + persisted(24, 32) + persisted(24, 8, 7))


def store(block, unit, first=True):
    records = persisted(unit * 4096, 4096) + persisted(4112 + 8 * block, 8, 0x1234)
    return records + (persisted(4096 + 4 * block, 4, unit) if first else [])


def test_the_pagers_order_passes():
    records = format_and_key() + store(0, 2) + store(1, 3) + store(0, 2, first=False)
    assert check_pager_order(records, LAYOUT) == []


def test_a_magic_before_its_header_is_durable_is_found():
    records = [["w", 0, 1048, 0], ["f", 0, 1048]] + persisted(0, 8, 1)
    assert any("magic" in problem for problem in check_pager_order(records, LAYOUT))


def test_a_key_before_its_map_is_written_is_found():
    records = persisted(0, 1048) + persisted(0, 8, 1) + persisted(24, 32) + persisted(24, 8, 7)
    assert any("key 7" in problem for problem in check_pager_order(records, LAYOUT))


def test_a_checksum_before_the_bytes_are_fenced_is_found():
    records = format_and_key() + [["w", 8192, 4096, 0], ["f", 8192, 4096]]
    records += persisted(4112, 8, 0x1234) + persisted(4096, 4, 2)
    assert any("checksum" in problem for problem in check_pager_order(records, LAYOUT))


def test_a_map_entry_before_its_checksum_is_found():
    records = format_and_key() + persisted(8192, 4096) + [["w", 4112, 8, 1]]
    records += persisted(4096, 4, 2) + [["f", 4112, 8], ["s"]]
    assert any("map entry" in problem for problem in check_pager_order(records, LAYOUT))


def test_a_map_entry_naming_an_unwritten_unit_is_found():
    records = format_and_key() + persisted(4112, 8, 0) + persisted(4096, 4, 5)
    problems = check_pager_order(records, LAYOUT)
    assert any("unit 5" in problem for problem in problems), problems


def test_a_write_never_made_durable_is_found():
    records = format_and_key() + store(0, 2) + [["w", 12288, 4096, 0]]
    assert any("never made durable" in p for p in check_pager_order(records, LAYOUT))


def test_the_lines_of_a_dump_are_joined_in_order():
    lines = [{"kind": "nvm_order", "who": "pager", "first": 0, "records": [["s"], ["s"]]},
             {"kind": "nvm_order", "who": "other", "first": 0, "records": [["s"]]},
             {"kind": "nvm_order", "who": "pager", "first": 2, "records": [["f", 0, 8]]}]
    assert records_of(lines) == [["s"], ["s"], ["f", 0, 8]]


# The tier's layout: tags at 4096 (8 bytes a line), lines from 8192.
TIER = {"who": "tier", "tags_offset": 4096, "lines_offset": 8192, "lines": 4, "line_bytes": 4096}
CLEAN, DIRTY = 1 << 48, 2 << 48


def tier_format():
    return persisted(4096, 32)  # every tag free


def test_the_tiers_order_passes():
    fill = [["w", 8192, 4096, 0], ["f", 8192, 4096], ["s"], ["w", 4096, 8, CLEAN | 5],
            ["f", 4096, 8], ["s"]]
    in_place = persisted(4096, 8, DIRTY | 5) + [["w", 8192 + 16, 16, 0], ["f", 8192 + 16, 16],
                                                ["s"]]
    new_line = persisted(12288, 4096) + persisted(4104, 8, DIRTY | 9)
    evict = persisted(4096, 8, 0) + persisted(8192, 4096) + persisted(4096, 8, CLEAN | 70)
    records = tier_format() + fill + in_place + new_line + evict
    assert check_tier_order(records, TIER) == []


def test_a_tag_before_its_line_is_durable_is_found():
    records = tier_format() + [["w", 8192, 4096, 0], ["f", 8192, 4096]] + persisted(4096, 8,
                                                                                   CLEAN | 5)
    assert any("before its bytes are durable" in p for p in check_tier_order(records, TIER))


def test_bytes_into_a_clean_line_and_a_renamed_tag_are_found():
    fill = persisted(8192, 4096) + persisted(4096, 8, CLEAN | 5)
    assert any("tag says clean" in p for p in check_tier_order(
        tier_format() + fill + persisted(8192, 16), TIER))
    assert any("renamed" in p for p in check_tier_order(
        tier_format() + fill + persisted(4096, 8, CLEAN | 6), TIER))
    unfenced_tag = [["w", 4096, 8, DIRTY | 5], ["f", 4096, 8]] + persisted(8192, 16)
    assert any("before its dirty tag" in p for p in check_tier_order(
        tier_format() + fill + unfenced_tag, TIER))
