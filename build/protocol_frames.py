"""build/protocol_frames.py: interfaces of kind `frame`, a wire format
carried in network frames rather than in ICAs (the memory-node protocol,
protocol/memnode.messages). The interface declares its header (`header_bytes
N` and one `field NAME OFFSET TYPE: meaning` line per little-endian field);
each message is a type number that `carries` one payload kind. Generated:
formica/protocol/NAME.h with the type enum, the header offsets and the
payload kind of each type (a switch). Used by build/protocol.py; the format
is in protocol/README.md."""

FIELD_BYTES = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}


class HeaderField:
    def __init__(self, name, offset, type_name, doc):
        self.name, self.offset, self.type, self.doc = name, offset, type_name, doc


def parse_interface_line(interface, keyword, words, doc, error):
    """header_bytes and field lines; False for a keyword that is not the frame's."""
    if keyword == "header_bytes":
        interface.header_bytes = int(words[1], 0)
    elif keyword == "field":
        if words[3] not in FIELD_BYTES:
            raise error(f"unknown field type '{words[3]}' (known: {', '.join(FIELD_BYTES)})")
        interface.header_fields.append(HeaderField(words[1], int(words[2], 0), words[3], doc))
    elif keyword == "carries_kind":
        interface.carries_kinds[words[1]] = doc
    else:
        return False
    return True


def check(interface, error):
    if interface.header_bytes is None:
        raise error(f"{interface.path}: a frame interface needs 'header_bytes N'")
    used = [None] * interface.header_bytes
    for field in interface.header_fields:
        size = FIELD_BYTES[field.type]
        if field.offset % size:
            raise error(f"{interface.path}: field {field.name} at {field.offset} is not "
                        f"naturally aligned")
        if field.offset + size > interface.header_bytes:
            raise error(f"{interface.path}: field {field.name} ends past the "
                        f"{interface.header_bytes}-byte header")
        for at in range(field.offset, field.offset + size):
            if used[at] is not None:
                raise error(f"{interface.path}: fields {used[at]} and {field.name} overlap")
            used[at] = field.name
    for message in interface.messages:
        if message.carries not in interface.carries_kinds:
            raise error(f"{interface.path}: {message.name} carries "
                        f"'{message.carries}', not one of the declared kinds "
                        f"({', '.join(interface.carries_kinds)})")


def header(interface, header_start):
    prefix, name = interface.prefix, interface.name
    lines = header_start(interface) + ["", f"enum {name}_type {{"]
    for message in interface.messages:
        lines.append(f"    {message.constant} = {message.number}, /* {message.doc} */")
    lines.append(f"    {prefix}TYPE_LAST = {max(m.number for m in interface.messages)},")
    lines += ["};", "", "/* The header after the Ethernet header: little-endian fields at these offsets. */",
              f"#define {prefix}HEADER_BYTES {interface.header_bytes}"]
    for field in interface.header_fields:
        lines.append(f"#define {prefix}AT_{field.name.upper()} {field.offset} /* {field.type}: "
                     f"{field.doc} */")
    lines += ["", "/* What a message's payload holds, by type. */", f"enum {name}_carries {{"]
    for kind, doc in interface.carries_kinds.items():
        lines.append(f"    {prefix}CARRIES_{kind.upper()}, /* {doc} */")
    lines += ["};", f"static inline enum {name}_carries {name}_type_carries(uint32_t type)", "{",
              "    switch (type) {"]
    for message in interface.messages:
        lines += [f"    case {message.constant}:",
                  f"        return {prefix}CARRIES_{message.carries.upper()};"]
    first = next(iter(interface.carries_kinds))
    lines += ["    default:", f"        return {prefix}CARRIES_{first.upper()};", "    }", "}"]
    return lines


def docs(interface):
    """The reference page's tables for a frame interface."""
    lines = [f"Header: {interface.header_bytes} bytes after the Ethernet header, "
             f"little-endian.", "", "| offset | field | type | meaning |", "|---|---|---|---|"]
    for field in interface.header_fields:
        lines.append(f"| {field.offset} | `{field.name}` | {field.type} | {field.doc} |")
    lines += ["", "| type | name | payload |", "|---|---|---|"]
    for message in interface.messages:
        carried = interface.carries_kinds[message.carries]
        lines.append(f"| {message.number} | `{message.constant}`: {message.doc} | "
                     f"`{message.carries}`: {carried} |")
    return lines
