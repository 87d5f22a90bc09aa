#!/usr/bin/env python3
"""build/protocol.py: turns the message declarations in protocol/*.messages
into C headers (operation numbers, one typed struct per message with a size
check, handler prototypes, dispatch and service tables; the server manifest
through build/protocol_servers.py) and docs/protocol.md.

Usage: build/protocol.py OUT_DIR [DECLARATION ...]   headers into OUT_DIR/formica/protocol/
       build/protocol.py --docs FILE [DECLARATION ...]   the reference page
       build/protocol.py --check-docs FILE [DECLARATION ...]   fails if FILE is stale
The format is described in protocol/README.md."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import protocol_facts  # noqa: E402 (facts on operations, beside this file)
import protocol_frames  # noqa: E402 (wire formats in network frames, beside this file)
import protocol_servers  # noqa: E402 (the server manifest, beside this file)

TYPES = {"u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t",
         "i32": "int32_t", "i64": "int64_t", "ptr": "uint64_t"}
SIZES = {"u8": 1, "u16": 2, "u32": 4, "u64": 8, "i32": 4, "i64": 8, "ptr": 8}
KINDS = ("request", "intercore", "syscall", "frame")
# Bytes a typed message may occupy, by interface kind.
LIMITS = {"request": "ICA_MESSAGE_BYTES"}
# Which kernel handles an inter-core message.
HANDLED_BY = ("mkernel", "pkernel", "every")


class DeclarationError(Exception):
    pass


class Field:
    def __init__(self, direction, type_name, name, doc):
        if type_name not in TYPES:
            raise DeclarationError(f"unknown type '{type_name}' (known: {', '.join(TYPES)})")
        self.direction, self.type, self.name, self.doc = direction, type_name, name, doc

    def c_type(self):
        return TYPES[self.type]


class Message:
    def __init__(self, interface, name, number, doc):
        self.interface, self.name, self.number, self.doc = interface, name, number, doc
        self.fields, self.notes, self.right, self.handler = [], [], None, None
        self.result, self.handled_by, self.notification, self.returns = "", None, False, True
        self.facts = protocol_facts.Facts()
        self.carries = None  # frame: the payload kind its type carries

    @property
    def constant(self):
        return f"{self.interface.prefix}{self.name.upper()}"

    @property
    def lower(self):
        return f"{self.interface.name}_{self.name}"

    def fields_in(self, *directions):
        return [f for f in self.fields if f.direction in directions]


class Interface:
    def __init__(self, name, path):
        self.name, self.path = name, path
        self.kind, self.server, self.context, self.doc = None, None, None, []
        self.prefix = name.upper() + "_"
        self.messages = []
        self.includes = []
        self.manifest = protocol_servers.ServerManifest()
        self.leaves = {}  # state name -> meaning: what an operation may leave as it is
        self.header_bytes, self.header_fields, self.carries_kinds = None, [], {}  # frame


def split_doc(text):
    name, _, doc = text.partition(":")
    return name.split(), doc.strip()


def parse(path):
    interface, message = None, None
    with open(path) as source:
        lines = source.read().splitlines()
    for number, raw in enumerate(lines, 1):
        line = "" if raw.lstrip().startswith("#") else raw.rstrip()
        if not line.strip():
            continue
        try:
            words, doc = split_doc(line.strip())
            keyword = words[0]
            if keyword == "interface":
                interface = Interface(words[1], path)
                interface.doc.append(doc)
            elif interface is None:
                raise DeclarationError("the file must start with 'interface NAME: text'")
            elif keyword == "message":
                message = Message(interface, words[1], int(words[2], 0), doc)
                interface.messages.append(message)
            elif message is None:
                parse_interface_line(interface, keyword, words, doc, line)
            else:
                parse_message_line(message, keyword, words, doc)
        except (DeclarationError, IndexError, ValueError) as error:
            raise DeclarationError(f"{path}:{number}: {error}: {raw.strip()}")
    check(interface, path)
    return interface


def parse_interface_line(interface, keyword, words, doc, line):
    if keyword == "kind" and words[1] in KINDS:
        interface.kind = words[1]
    elif keyword == "server":
        interface.server = words[1]
    elif keyword == "prefix":
        interface.prefix = words[1]
    elif keyword == "context":
        interface.context = line.strip()[len("context"):].strip()
    elif keyword == "include":
        interface.includes.append(words[1])
    elif keyword == "doc":
        interface.doc.append(doc)
    elif keyword == "leaves":
        interface.leaves[words[1]] = doc
    elif protocol_frames.parse_interface_line(interface, keyword, words, doc, DeclarationError):
        pass
    elif keyword in protocol_servers.MANIFEST_KEYWORDS:
        protocol_servers.parse_manifest_line(interface.manifest, keyword, words, DeclarationError)
    else:
        raise DeclarationError(f"unknown interface line '{keyword}'")


def parse_message_line(message, keyword, words, doc):
    if keyword in ("in", "out", "inout"):
        message.fields.append(Field(keyword, words[1], words[2], doc))
    elif keyword == "right":
        message.right = words[1]
    elif keyword == "handler":
        message.handler = words[1]
    elif keyword == "result":
        message.result = doc
    elif keyword in ("payload", "data", "note"):
        message.notes.append((keyword, doc))
    elif keyword == "handled":
        if words[1] not in HANDLED_BY:
            raise DeclarationError(f"handled by one of {HANDLED_BY}")
        message.handled_by = words[1]
    elif keyword == "notification":
        message.notification = True
    elif keyword == "noreturn":
        message.returns = False
    elif keyword == "carries":
        message.carries = words[1]
    elif keyword in protocol_facts.MESSAGE_FACTS:
        protocol_facts.parse_fact(message.facts, keyword, words)
    else:
        raise DeclarationError(f"unknown message line '{keyword}'")


def check(interface, path):
    if interface is None or interface.kind is None:
        raise DeclarationError(f"{path}: no interface, or no 'kind'")
    seen = {}
    for message in interface.messages:
        if message.number in seen:
            raise DeclarationError(f"{path}: {message.name} and {seen[message.number]} share "
                                   f"number {message.number}")
        seen[message.number] = message.name
        if interface.kind == "intercore" and message.handled_by is None:
            raise DeclarationError(f"{path}: {message.name} says no 'handled mkernel|pkernel|every'")
        if interface.kind == "syscall" and len(message.fields) > 6:
            raise DeclarationError(f"{path}: {message.name} has more than 6 arguments")
        if interface.kind == "request" and message.right is None:
            raise DeclarationError(f"{path}: {message.name} says no 'right'")
    protocol_facts.check(interface, DeclarationError)
    if interface.kind == "frame":
        protocol_frames.check(interface, DeclarationError)


# ---- C generation -------------------------------------------------------------------------


def c_comment(text, indent=""):
    return f"{indent}/* {text} */" if text else ""


def struct_lines(name, fields, limit):
    lines = [f"struct {name} {{"]
    offset = 0
    for field in fields:
        size = SIZES[field.type]
        if offset % size:
            raise DeclarationError(f"{name}.{field.name} is not naturally aligned: order the "
                                   f"fields so that each starts at a multiple of its size")
        offset += size
        note = f"{field.direction}: {field.doc}" if field.doc else field.direction
        lines.append(f"    {field.c_type()} {field.name}; /* {note} */")
    if not fields:
        lines.append("    uint8_t unused; /* no fields */")
    lines.append("};")
    if limit:
        lines.append(f'_Static_assert(sizeof(struct {name}) <= {limit}, "struct {name} does not '
                     f'fit in its message");')
    return lines


def header_start(interface, extra_includes=()):
    doc = " ".join(d for d in interface.doc if d)
    lines = [f"/* Generated by build/protocol.py from {interface.path}: do not edit.",
             f" * {doc} */", "#pragma once", "#include <stdint.h>"]
    lines += [f"#include <{include}>" for include in list(interface.includes) + list(extra_includes)]
    return lines


def request_header(interface):
    lines = header_start(interface, ["formica/errors.h", "formica/ica.h", "formica/rights.h"]) + [""]
    if interface.server:
        lines.append(f'#define SERVER_NAME_{interface.name.upper()} "{interface.server}"')
    lines.append(f"enum {interface.name}_operation {{")
    for message in interface.messages:
        lines.append(f"    {message.constant} = {message.number}, {c_comment(message.doc)}")
    lines.append("};")
    numbers = [m.number for m in interface.messages]
    lines.append(f"#define {interface.prefix}FIRST_OPERATION {min(numbers)}")
    lines.append(f"#define {interface.prefix}LAST_OPERATION {max(numbers)}")
    for message in interface.messages:
        lines.append("")
        lines.append(f"/* {message.constant}: {message.doc}")
        for kind, note in message.notes:
            lines.append(f" * {kind}: {note}")
        lines.append(f" * result: {message.result or '0, or an -E_* code'}; right: {message.right} */")
        lines += struct_lines(f"{message.lower}_message", message.fields, LIMITS["request"])
        lines.append(f"static inline struct {message.lower}_message *{message.lower}_of("
                     f"struct ica_control *page)")
        lines.append(f"{{\n    return (struct {message.lower}_message *)page->message;\n}}")
    lines.append("")
    lines.append(f"/* The right a sender needs for each operation (0: unknown operation). */")
    lines.append(f"static inline uint32_t {interface.name}_operation_right(uint32_t operation)")
    lines.append("{\n    switch (operation) {")
    for message in interface.messages:
        lines.append(f"    case {message.constant}:\n        return RIGHT_{message.right.upper()};")
    lines.append("    default:\n        return 0;\n    }\n}")
    lines.append("")
    lines.append("/* 0 when the request may be served: -E_INVALID for an unknown operation,")
    lines.append(" * -E_PERMISSION when the sender (as the kernel stamped it) lacks its right. */")
    lines.append(f"static inline long {interface.name}_check(const struct ica_control *page)")
    lines.append("{")
    lines.append(f"    uint32_t right = {interface.name}_operation_right(page->operation);")
    lines.append("    if (right == 0)\n        return -E_INVALID;")
    lines.append("    return (page->sender_rights & right) != 0 ? 0 : -E_PERMISSION;")
    lines.append("}")
    return lines + protocol_facts.request_lines(interface)


def request_dispatch(interface):
    context = interface.context or "void *"
    lines = header_start(interface, [f"formica/protocol/{interface.name}.h",
                                     "formica/errors.h", "formica/request.h"])
    match = re.match(r"(struct \w+)", context)
    if match:
        lines.append(f"{match.group(1)};")
    lines.append("/* For the server: each handler below must be defined somewhere in it, else")
    lines.append(" * the link fails. A handler returns the result, or a server-defined value")
    lines.append(" * meaning \"forwarded\" that its caller understands. */")
    for message in interface.messages:
        handler = message.handler or message.lower
        lines.append(f"long {handler}({context} context, uint64_t control,")
        lines.append(f"    struct {message.lower}_message *message);")
    lines.append("")
    lines.append(f"static inline const char *{interface.name}_operation_name(uint32_t operation)")
    lines.append("{\n    switch (operation) {")
    for message in interface.messages:
        lines.append(f'    case {message.constant}:\n        return "{message.constant}";')
    lines.append('    default:\n        return "unknown";\n    }\n}')
    lines.append("")
    lines.append(f"/* Calls the operation's handler after {interface.name}_check(), which refuses (with")
    lines.append(" * a log line) an unknown operation (-E_INVALID) or a sender without its right")
    lines.append(" * (-E_PERMISSION). The one place a server's requests are checked. The hot")
    lines.append(" * operations come first, each tested with its own right. */")
    lines.append(f"static inline long {interface.name}_dispatch({context} context, uint64_t control)")
    lines.append("{")
    lines.append("    struct ica_control *page = ica_control_of(control);")
    lines += protocol_facts.hot_dispatch_lines(interface, lambda m: m.handler or m.lower)
    lines.append(f"    long refused = {interface.name}_check(page);")
    label = interface.server or interface.name
    lines.append(f'    if (refused != 0)\n        return request_log_refusal("{label}", page, refused);')
    lines.append("    switch (page->operation) {")
    for message in interface.messages:
        handler = message.handler or message.lower
        lines.append(f"    case {message.constant}:")
        lines.append(f"        return {handler}(context, control, {message.lower}_of(page));")
    lines.append("    default:\n        return -E_INVALID;\n    }\n}")
    return lines


def intercore_header(interface):
    lines = header_start(interface) + [""]
    lines.append("enum intercore_type {")
    lines.append("    MESSAGE_NONE = 0,")
    for message in interface.messages:
        lines.append(f"    {message.constant} = {message.number}, {c_comment(message.doc)}")
    lines.append(f"    MESSAGE_TYPE_COUNT = {max(m.number for m in interface.messages) + 1},")
    lines.append("    MESSAGE_REPLY = 0x8000, /* or-ed into the type of an answer */")
    lines.append("};")
    members = []
    for message in interface.messages:
        lines.append("")
        where = {"mkernel": "the m-kernel", "pkernel": "each p-kernel",
                 "every": "every core's kernel"}[message.handled_by]
        answer = "no reply (a notification)" if message.notification else "replied to"
        lines.append(f"/* {message.constant}: {message.doc} Handled by {where}; {answer}. */")
        lines += struct_lines(f"{message.lower}_request", message.fields_in("in"), None)
        members.append(f"struct {message.lower}_request {message.name};")
        if not message.notification:
            lines += struct_lines(f"{message.lower}_reply", message.fields_in("out"), None)
            members.append(f"struct {message.lower}_reply {message.name}_reply;")
    lines.append("")
    lines.append("/* One message: the type says which member of the union it carries. */")
    lines.append("struct intercore_message {")
    lines.append("    uint32_t type;     /* enum intercore_type, | MESSAGE_REPLY in an answer */")
    lines.append("    uint32_t from;     /* sending core, filled in by intercore_send */")
    lines.append("    uint64_t sequence; /* matches a reply to its request */")
    lines.append("    union {")
    lines.append("        uint64_t words[INTERCORE_MESSAGE_WORDS];")
    lines += [f"        {member}" for member in members]
    lines.append("    };")
    lines.append("};")
    lines.append('_Static_assert(sizeof(struct intercore_message) == 16 + 8 * INTERCORE_MESSAGE_WORDS,')
    lines.append('               "a message type is larger than INTERCORE_MESSAGE_WORDS words");')
    return lines


def intercore_handler_name(message):
    return message.handler or f"serve_{message.name}"


def intercore_services(interface, handled_by):
    """One kernel's services: handler prototypes and the switch that calls them."""
    chosen = [m for m in interface.messages if m.handled_by in handled_by]
    lines = header_start(interface, ["stdbool.h", "intercore.h"])
    lines.append("/* Include in exactly one file of the kernel: each handler below must be")
    lines.append(" * defined in that kernel, else the link fails. */")
    for message in chosen:
        reply = "" if message.notification else f",\n    struct {message.lower}_reply *reply"
        noreturn = "" if message.returns else "__attribute__((noreturn)) "
        lines.append(f"{noreturn}void {intercore_handler_name(message)}("
                     f"const struct intercore_message *message,")
        lines.append(f"    const struct {message.lower}_request *request{reply});")
    lines.append("")
    lines.append("/* Runs the service of `message`, answering into `reply` (left alone for a")
    lines.append(" * notification); false when this kernel serves no such message. */")
    lines.append("static bool intercore_serve(const struct intercore_message *message,")
    lines.append("                            struct intercore_message *reply)")
    lines.append("{")
    lines.append("    switch (message->type) {")
    for message in chosen:
        lines.append(f"    case {message.constant}:")
        reply = "" if message.notification else f", &reply->{message.name}_reply"
        lines.append(f"        {intercore_handler_name(message)}(message, &message->{message.name}"
                     f"{reply});")
        lines.append("        return true;")
    lines.append("    default:")
    lines.append("        (void)reply;")
    lines.append("        return false;")
    lines.append("    }")
    lines.append("}")
    lines.append("")
    lines.append("/* True for a message that expects no reply. */")
    lines.append("static bool intercore_is_notification(uint32_t type)")
    lines.append("{")
    notifications = [m.constant for m in interface.messages if m.notification]
    lines.append("    return " + " ||\n           ".join(f"type == {n}" for n in notifications) + ";")
    lines.append("}")
    return lines


def user_type(field):
    return "const void *" if field.type == "ptr" else field.c_type()


def syscall_header(interface):
    lines = header_start(interface) + ["", "enum syscall_number {"]
    for message in interface.messages:
        lines.append(f"    {message.constant} = {message.number}, {c_comment(message.doc)}")
    lines.append(f"    SYS_COUNT = {max(m.number for m in interface.messages) + 1},")
    lines.append("};")
    lines.append("")
    lines.append("#ifndef FORMICA_KERNEL /* user space: one typed stub per call */")
    lines.append("#include <formica/syscall_instruction.h>")
    for message in interface.messages:
        parameters = ", ".join(f"{user_type(f)} {f.name}" for f in message.fields) or "void"
        arguments = [f"(long){f.name}" for f in message.fields] + ["0"] * (6 - len(message.fields))
        lines.append(f"/* {message.doc} -> {message.result or '0, or an -E_* code'} */")
        lines.append(f"static inline long system_call_{message.name}({parameters})")
        lines.append(f"{{\n    return syscall6({message.constant}, {', '.join(arguments)});\n}}")
    lines.append("#endif")
    return lines


REGISTERS = ["rdi", "rsi", "rdx", "r10", "r8", "r9"]


def argument_check(field, register):
    """A C condition that is true when the register does not hold a valid `field`."""
    if field.type == "u32":
        return f"frame->{register} > UINT32_MAX"
    if field.type == "i32":
        return f"(int64_t)frame->{register} != (int32_t)frame->{register}"
    return None


def syscall_arguments(interface):
    """Per system call with arguments: a struct of them and the one function that reads
    them from the registers and checks their ranges (the dispatch's entries and the ICA
    fast path both decode through it)."""
    lines = header_start(interface, ["formica/protocol/syscalls.h", "stdbool.h", "stdint.h", "trap.h"])
    lines.append("/* Kernel only: system call arguments from a trap frame. */")
    for message in (m for m in interface.messages if m.fields):
        lines.append("")
        lines.append(f"struct {message.name}_arguments {{")
        lines += [f"    {f.c_type()} {f.name};" for f in message.fields]
        lines.append("};")
        lines.append(f"/* {message.constant}'s arguments; false when one is out of its type's range. */")
        lines.append(f"static inline bool {message.name}_arguments_of(const struct trap_frame *frame,")
        lines.append(f"        struct {message.name}_arguments *arguments)")
        lines.append("{")
        checks = [c for c in (argument_check(f, REGISTERS[i]) for i, f in enumerate(message.fields))
                  if c]
        if checks:
            lines.append("    if (" + " ||\n        ".join(checks) + ")")
            lines.append("        return false;")
        for i, field in enumerate(message.fields):
            lines.append(f"    arguments->{field.name} = ({field.c_type()})frame->{REGISTERS[i]};")
        lines.append("    return true;")
        lines.append("}")
    return lines


def syscall_table(interface):
    lines = header_start(interface, ["formica/errors.h", "formica/protocol/syscalls.h",
                                     "formica/protocol/syscall_arguments.h", "trap.h"])
    lines.append("/* Include only in kernel/syscall.c: the table of handlers. Each handler")
    lines.append(" * takes the declared arguments; a missing handler fails the link. */")
    for message in interface.messages:
        parameters = ", ".join(f"{f.c_type()} {f.name}" for f in message.fields) or "void"
        noreturn = "" if message.returns else "__attribute__((noreturn)) "
        lines.append(f"{noreturn}long sys_{message.name}({parameters});")
    for message in interface.messages:
        lines.append("")
        lines.append(f"static long enter_{message.name}(const struct trap_frame *frame)")
        lines.append("{")
        if message.fields:
            lines.append(f"    struct {message.name}_arguments arguments;")
            lines.append(f"    if (!{message.name}_arguments_of(frame, &arguments))")
            lines.append("        return -E_INVALID;")
            values = ", ".join(f"arguments.{f.name}" for f in message.fields)
            lines.append(f"    return sys_{message.name}({values});")
        else:
            lines.append("    (void)frame;")
            lines.append(f"    return sys_{message.name}();")
        lines.append("}")
    lines.append("")
    lines.append("typedef long (*syscall_handler)(const struct trap_frame *frame);")
    lines.append("static const syscall_handler syscall_handlers[SYS_COUNT] = {")
    for message in interface.messages:
        lines.append(f"    [{message.constant}] = enter_{message.name},")
    lines.append("};")
    return lines


def outputs(interface):
    """File name (under formica/protocol/) -> lines."""
    if interface.kind == "request":
        return {f"{interface.name}.h": request_header(interface),
                f"{interface.name}_dispatch.h": request_dispatch(interface)}
    if interface.kind == "frame":
        return {f"{interface.name}.h": protocol_frames.header(interface, header_start)}
    if interface.kind == "intercore":
        return {"intercore.h": intercore_header(interface),
                "mkernel_services.h": intercore_services(interface, ("mkernel", "every")),
                "pkernel_services.h": intercore_services(interface, ("pkernel", "every"))}
    return {"syscalls.h": syscall_header(interface), "syscall_table.h": syscall_table(interface),
            "syscall_arguments.h": syscall_arguments(interface)}


def write_if_changed(path, text):
    if os.path.exists(path) and open(path).read() == text:
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as out:
        out.write(text)
    os.replace(path + ".tmp", path)


# ---- the reference page ---------------------------------------------------------------------


def field_text(fields):
    return "; ".join(f"{f.direction} `{f.type} {f.name}`" + (f": {f.doc}" if f.doc else "")
                     for f in fields) or "none"


def docs(interfaces):
    lines = ["# The message reference", "",
             "Generated by `build/protocol.py` from `protocol/*.messages`: do not edit; "
             "`make docs-protocol` rewrites it and `make test` fails when it is stale. "
             "How to add a message: [walkthrough.md](walkthrough.md).", ""]
    for interface in interfaces:
        lines.append(f"## {interface.name} ({interface.kind}, `{interface.path}`)")
        lines.append("")
        lines.append(" ".join(d for d in interface.doc if d))
        lines.append("")
        server = protocol_servers.docs_line(interface)
        if server:
            lines += [server, ""]
        if interface.kind == "frame":
            lines += protocol_frames.docs(interface) + [""]
            continue
        right_column = "handled by" if interface.kind == "intercore" else "right"
        lines.append(f"| number | name | {right_column} | fields | result |")
        lines.append("|---|---|---|---|---|")
        for m in interface.messages:
            notes = "".join(f"<br>{kind}: {note}" for kind, note in m.notes)
            facts = protocol_facts.docs_text(m)
            notes += f"<br>facts: {facts}" if facts else ""
            if interface.kind == "intercore":
                who = m.handled_by + (", notification" if m.notification else "")
            else:
                who = m.right or "any process"
            lines.append(f"| {m.number} | `{m.constant}`: {m.doc}{notes} | {who} | "
                         f"{field_text(m.fields)} | {m.result or '0 or -E_*'} |")
        lines.append("")
    return "\n".join(lines)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    mode, target, paths = argv[1], argv[2], argv[3:]
    if mode in ("--docs", "--check-docs"):
        pass
    else:
        mode, target, paths = "--headers", argv[1], argv[2:]
    try:
        interfaces = [parse(path) for path in sorted(paths)]
        protocol_servers.check_all(interfaces, DeclarationError)
        if mode == "--headers":
            for interface in interfaces:
                for name, lines in outputs(interface).items():
                    write_if_changed(os.path.join(target, "formica", "protocol", name),
                                     "\n".join(lines) + "\n")
            for name, lines in protocol_servers.outputs(interfaces).items():
                write_if_changed(os.path.join(target, name), "\n".join(lines) + "\n")
            return 0
        text = docs(interfaces) + "\n"
    except DeclarationError as error:
        print(f"protocol: {error}", file=sys.stderr)
        return 1
    if mode == "--docs":
        write_if_changed(target, text)
        return 0
    if not os.path.exists(target) or open(target).read() != text:
        print(f"protocol: {target} is stale; run `make docs-protocol`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
