"""build/protocol_facts.py: facts declared on a server's operations in
protocol/*.messages, checked and turned into C beside the generated
operations (build/protocol.py calls it). Every fact becomes a constant mask
or a switch, never a table walk, so a request's fast path stays direct:
    tagged      its message starts with the client's request number `tag`;
                the server keeps its answer (NAME_operation_is_tagged)
    leaves X    it leaves the state X as it is (X declared on the interface
                with `leaves X: meaning`); leaves_without_data X: only when
                the request comes without a data ICA (NAME_what_request_leaves)
    hot [N]     dispatched first, its right tested as a constant, the hot
                operations in the order of N (default: their numbers' order)
                (NAME_dispatch)
    range       its message is three words: the handle, where, how much
                (struct NAME_range_message, NAME_range_put)
The format is in protocol/README.md."""

MESSAGE_FACTS = ("tagged", "leaves", "leaves_without_data", "hot", "range")
MASK_LIMIT = 64  # operation numbers a 64-bit mask can hold


class Facts:
    """One message's facts."""

    def __init__(self):
        self.tagged = self.range = False
        self.hot = None  # the rank among the hot operations, or None
        self.leaves, self.leaves_without_data = [], []


def parse_fact(facts, keyword, words):
    if keyword in ("leaves", "leaves_without_data"):
        getattr(facts, keyword).extend(words[1:])
    elif keyword == "hot":
        facts.hot = int(words[1], 0) if len(words) > 1 else 0
    else:
        setattr(facts, keyword, True)


def check(interface, error):
    """Refuses facts that the generated code could not honour."""
    for message in interface.messages:
        facts = message.facts
        declared = facts.tagged or facts.hot is not None or facts.range or facts.leaves or \
            facts.leaves_without_data
        if declared and interface.kind != "request":
            raise error(f"{interface.path}: {message.name}: operation facts are for requests")
        if facts.tagged:
            first = message.fields[0] if message.fields else None
            if first is None or (first.direction, first.type, first.name) != ("in", "u64", "tag"):
                raise error(f"{interface.path}: {message.name} is tagged: its first field must "
                            f"be 'in u64 tag'")
            if message.number >= MASK_LIMIT:
                raise error(f"{interface.path}: {message.name} is tagged: its number must be "
                            f"below {MASK_LIMIT}")
        if facts.range and [(f.direction, f.type) for f in message.fields] != [("in", "u64")] * 3:
            raise error(f"{interface.path}: {message.name} is a range: it needs exactly three "
                        f"'in u64' fields (the handle, where, how much)")
        for name in facts.leaves + facts.leaves_without_data:
            if name not in interface.leaves:
                raise error(f"{interface.path}: {message.name} leaves '{name}', which the "
                            f"interface does not declare ('leaves {name}: meaning')")


def constant(interface, name):
    return f"{interface.prefix}LEAVES_{name.upper()}"


def tagged_lines(interface):
    tagged = [m for m in interface.messages if m.facts.tagged]
    if not tagged:
        return []
    mask = " | ".join(f"1ull << {m.constant}" for m in tagged)
    name = interface.name
    return ["", "/* The operations declared tagged: their message starts with the client's request",
            " * number (`tag`), and the server keeps their answers. */",
            f"#define {interface.prefix}TAGGED_OPERATIONS ({mask})",
            f"static inline _Bool {name}_operation_is_tagged(uint32_t operation)",
            "{",
            f"    return operation < {MASK_LIMIT} && ({interface.prefix}TAGGED_OPERATIONS >> "
            f"operation) & 1;",
            "}"]


def mask_of(interface, names):
    return " | ".join(constant(interface, name) for name in names) or "0"


def leaves_lines(interface):
    if not interface.leaves:
        return []
    lines = ["", "/* What a request leaves as it is (`leaves` on the interface and its operations). */"]
    for bit, (name, meaning) in enumerate(interface.leaves.items()):
        lines.append(f"#define {constant(interface, name)} {1 << bit}u /* {meaning} */")
    lines += [f"static inline uint32_t {interface.name}_what_request_leaves("
              f"const struct ica_control *page)", "{", "    switch (page->operation) {"]
    for message in interface.messages:
        facts = message.facts
        if not facts.leaves and not facts.leaves_without_data:
            continue
        always = mask_of(interface, facts.leaves)
        lines.append(f"    case {message.constant}:")
        if facts.leaves_without_data:
            without = mask_of(interface, facts.leaves + facts.leaves_without_data)
            lines.append(f"        return page->data_count == 0 ? ({without}) : ({always});")
        else:
            lines.append(f"        return {always};")
    lines += ["    default:", "        return 0;", "    }", "}"]
    return lines


def range_lines(interface):
    ranges = [m for m in interface.messages if m.facts.range]
    if not ranges:
        return []
    name = interface.name
    lines = ["", f"/* The messages declared range ({', '.join(m.constant for m in ranges)}): three",
             " * words, the handle, where and how much. */",
             f"struct {name}_range_message {{",
             "    uint64_t handle;", "    uint64_t where;", "    uint64_t count;", "};"]
    for message in ranges:
        lines.append(f"_Static_assert(sizeof(struct {message.lower}_message) == "
                     f"sizeof(struct {name}_range_message), \"{message.constant} is a range\");")
    lines += [f"static inline void {name}_range_put(uint8_t *message, uint64_t handle, "
              f"uint64_t where, uint64_t count)",
              "{",
              f"    *(struct {name}_range_message *)message = "
              f"(struct {name}_range_message){{handle, where, count}};",
              "}"]
    return lines


def request_lines(interface):
    """What the operation header (NAME.h) gains from the facts."""
    return tagged_lines(interface) + leaves_lines(interface) + range_lines(interface)


def hot_dispatch_lines(interface, handler_of):
    """The first lines of NAME_dispatch: the hot operations, each tested with its right."""
    lines = []
    hot = [m for m in interface.messages if m.facts.hot is not None]
    for message in sorted(hot, key=lambda m: (m.facts.hot, m.number)):
        lines += [f"    if (page->operation == {message.constant} &&",
                  f"        (page->sender_rights & RIGHT_{message.right.upper()}) != 0)",
                  f"        return {handler_of(message)}(context, control, {message.lower}_of(page));"]
    return lines


def docs_text(message):
    """The reference page's words for a message's facts ('' when it has none)."""
    facts, words = message.facts, []
    if facts.tagged:
        words.append("tagged")
    if facts.hot is not None:
        words.append("hot" + (f" {facts.hot}" if facts.hot else ""))
    if facts.range:
        words.append("range")
    if facts.leaves:
        words.append("leaves " + ", ".join(facts.leaves))
    if facts.leaves_without_data:
        words.append("without a data ICA also leaves " + ", ".join(facts.leaves_without_data))
    return "; ".join(words)
