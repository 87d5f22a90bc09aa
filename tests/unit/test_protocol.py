"""test_protocol.py: build/protocol.py refuses malformed declarations with a
clear message and generates what the C code relies on (run by `make
protocol-check`, under pytest)."""
import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("protocol", ROOT / "build" / "protocol.py")
protocol = importlib.util.module_from_spec(spec)
spec.loader.exec_module(protocol)

GOOD = """interface demo: A demo server.
    kind request
    server demo
    context void *

message ping 1: Answers.
    in u64 value: a number
    out u32 reply: an answer
    right test
"""


def declare(tmp_path, text):
    path = tmp_path / "demo.messages"
    path.write_text(text)
    return str(path)


def test_good_declaration_generates_typed_struct_and_dispatch(tmp_path):
    out = tmp_path / "gen"
    result = subprocess.run([sys.executable, str(ROOT / "build/protocol.py"), str(out),
                             declare(tmp_path, GOOD)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    header = (out / "formica/protocol/demo.h").read_text()
    assert "DEMO_PING = 1," in header
    assert "struct demo_ping_message {" in header and "uint64_t value;" in header
    assert "_Static_assert(sizeof(struct demo_ping_message) <= ICA_MESSAGE_BYTES" in header
    dispatch = (out / "formica/protocol/demo_dispatch.h").read_text()
    assert "long demo_ping(void * context, uint64_t control," in dispatch
    assert "return demo_ping(context, control, demo_ping_of(page));" in dispatch


@pytest.mark.parametrize("change, complaint", [
    (("message ping 1", "message ping 1\n    right test\nmessage pong 1"), "share number 1"),
    (("    right test\n", ""), "says no 'right'"),
    (("in u64 value", "in u66 value"), "unknown type 'u66'"),
    (("    kind request\n", ""), "no 'kind'"),
    (("right test", "rite test"), "unknown message line 'rite'"),
])
def test_malformed_declarations_are_refused(tmp_path, change, complaint):
    with pytest.raises(protocol.DeclarationError, match=complaint):
        protocol.parse(declare(tmp_path, GOOD.replace(*change)))


def test_misaligned_field_is_refused(tmp_path):
    text = GOOD.replace("    in u64 value: a number\n    out u32 reply: an answer",
                        "    out u32 reply: an answer\n    in u64 value: a number")
    interface = protocol.parse(declare(tmp_path, text))
    with pytest.raises(protocol.DeclarationError, match="not naturally aligned"):
        protocol.outputs(interface)


def test_syscall_entry_checks_narrow_arguments(tmp_path):
    text = """interface sys: Calls.
    kind syscall
    prefix SYS_

message wait 7: Waits.
    in u32 pid: the child
    in i32 code: a code
    in ptr buffer: where
"""
    interface = protocol.parse(declare(tmp_path, text))
    decoder = "\n".join(protocol.outputs(interface)["syscall_arguments.h"])
    assert "frame->rdi > UINT32_MAX" in decoder
    assert "(int64_t)frame->rsi != (int32_t)frame->rsi" in decoder
    assert "arguments->pid = (uint32_t)frame->rdi;" in decoder
    assert "arguments->code = (int32_t)frame->rsi;" in decoder
    assert "arguments->buffer = (uint64_t)frame->rdx;" in decoder
    table = "\n".join(protocol.outputs(interface)["syscall_table.h"])
    assert "if (!wait_arguments_of(frame, &arguments))\n        return -E_INVALID;" in table
    assert "return sys_wait(arguments.pid, arguments.code, arguments.buffer);" in table


def test_committed_reference_is_current():
    declarations = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "protocol").glob("*.messages"))
    result = subprocess.run([sys.executable, "build/protocol.py", "--check-docs", "docs/protocol.md",
                             *declarations], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


SERVER_LINES = """    program servers/demo
    boot 1
    placement demo
    rights file statistics
    spawn driver
    user 42
    reserved
    restart 7
    instances
"""


def test_server_manifest_generates_every_table(tmp_path):
    out = tmp_path / "gen"
    text = GOOD.replace("    server demo\n", "    server demo\n" + SERVER_LINES)
    result = subprocess.run([sys.executable, str(ROOT / "build/protocol.py"), str(out),
                             declare(tmp_path, text)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    servers = (out / "formica/protocol/servers.h").read_text()
    assert "SERVER_DEMO, /*" in servers and "PLACEMENT_SERVERS\n};" in servers
    assert '#define PLACEMENT_SERVER_KEYS "demo"' in servers
    assert '#define RESERVED_SERVER_NAMES "demo"' in servers
    boot = (out / "formica/protocol/boot_servers.h").read_text()
    assert ('[SERVER_DEMO] = {.name = "demo", .flags = SPAWN_DRIVER, .rights = RIGHT_RESERVED_NAME'
            ' | RIGHT_FILE | RIGHT_STATISTICS, .user = 42, .restart_limit = 7, .instances = 1,'
            ' .optional = 0},') in boot
    assert "#define PLACEMENT_SERVER_INSTANCES 1" in servers
    assert "#define PLACEMENT_SERVER_OPTIONAL 0" in servers
    assert "#define USER_DEMO 42" in servers
    assert (out / "servers.mk").read_text().endswith("SERVER_PROGRAMS := demo:servers/demo\n")


def test_an_interface_without_server_lines_is_no_boot_server(tmp_path):
    interfaces = [protocol.parse(declare(tmp_path, GOOD))]
    protocol.protocol_servers.check_all(interfaces, protocol.DeclarationError)
    generated = protocol.protocol_servers.outputs(interfaces)
    assert "    PLACEMENT_SERVERS\n" in "\n".join(generated["formica/protocol/servers.h"])
    assert generated["servers.mk"][-1] == "SERVER_PROGRAMS := "


@pytest.mark.parametrize("change, complaint", [
    (("    program servers/demo\n", ""), "needs 'program FOLDER' and 'placement KEY'"),
    (("    placement demo\n", ""), "needs 'program FOLDER' and 'placement KEY'"),
    (("    boot 1\n", ""), "add 'boot N'"),
    (("    boot 1\n", "    boot 2\n"), r"boot orders must be 1..1 once each, found \[2\]"),
    (("    placement demo\n", "    placement app\n"), "'app' is the placement key of applications"),
    (("spawn driver", "spawn wizard"), "unknown spawn flag 'wizard'"),
    (("user 42", "user 0"), "a server's user is a system uid, 1-999"),
    (("user 42", "user 1000"), "a server's user is a system uid, 1-999"),
])
def test_malformed_server_lines_are_refused(tmp_path, change, complaint):
    text = GOOD.replace("    server demo\n", "    server demo\n" + SERVER_LINES.replace(*change))
    with pytest.raises(protocol.DeclarationError, match=complaint):
        interface = protocol.parse(declare(tmp_path, text))
        protocol.protocol_servers.check_all([interface], protocol.DeclarationError)


def test_server_lines_need_a_server_name(tmp_path):
    text = GOOD.replace("    server demo\n", SERVER_LINES)
    with pytest.raises(protocol.DeclarationError, match="need a 'server NAME' line"):
        protocol.protocol_servers.check_all([protocol.parse(declare(tmp_path, text))],
                                            protocol.DeclarationError)


def test_two_servers_may_not_share_a_boot_order_or_placement_key(tmp_path):
    first = protocol.parse(declare(tmp_path, GOOD.replace("    server demo\n",
                                                          "    server demo\n" + SERVER_LINES)))
    other = tmp_path / "other.messages"
    other.write_text(GOOD.replace("demo", "other").replace(
        "    server other\n", "    server other\n" + SERVER_LINES.replace("demo", "other")))
    second = protocol.parse(str(other))
    with pytest.raises(protocol.DeclarationError, match=r"found \[1, 1\]"):
        protocol.protocol_servers.check_all([first, second], protocol.DeclarationError)
    second.manifest.boot, second.manifest.placement = 2, "demo"
    with pytest.raises(protocol.DeclarationError, match="share a placement key"):
        protocol.protocol_servers.check_all([first, second], protocol.DeclarationError)


FACTS = """interface demo: A demo server.
    kind request
    server demo
    context void *
    leaves cache: it leaves the demo cache as it is

message open 1: Opens.
    in u64 tag: the request number
    right test
    tagged

message read 2: Reads.
    in u64 handle: a handle
    in u64 where: an offset
    in u64 count: a length
    right file
    hot 2
    range
    leaves cache

message write 3: Writes.
    in u64 handle: a handle
    in u64 where: an offset
    in u64 count: a length
    right file
    hot 1
    leaves_without_data cache
"""


def test_operation_facts_become_masks_and_switches(tmp_path):
    interface = protocol.parse(declare(tmp_path, FACTS))
    generated = protocol.outputs(interface)
    header = "\n".join(generated["demo.h"])
    assert "#define DEMO_TAGGED_OPERATIONS (1ull << DEMO_OPEN)" in header
    assert "return operation < 64 && (DEMO_TAGGED_OPERATIONS >> operation) & 1;" in header
    assert "#define DEMO_LEAVES_CACHE 1u" in header
    assert "    case DEMO_READ:\n        return DEMO_LEAVES_CACHE;" in header
    assert "return page->data_count == 0 ? (DEMO_LEAVES_CACHE) : (0);" in header
    assert "DEMO_OPEN:\n        return" not in header.split("what_request_leaves")[1]
    assert "struct demo_range_message {" in header and "demo_range_put(uint8_t *message" in header
    dispatch = "\n".join(generated["demo_dispatch.h"])
    write_test = dispatch.index("if (page->operation == DEMO_WRITE &&")
    read_test = dispatch.index("if (page->operation == DEMO_READ &&")
    assert write_test < read_test < dispatch.index("long refused = demo_check(page);")
    assert "(page->sender_rights & RIGHT_FILE) != 0)\n        return demo_read(" in dispatch


@pytest.mark.parametrize("change, complaint", [
    (("    in u64 tag: the request number\n", "    in u32 flags: some\n"),
     "its first field must be 'in u64 tag'"),
    (("message open 1:", "message open 70:"), "its number must be below 64"),
    (("    in u64 count: a length\n    right file\n    hot 2",
      "    in u32 count: a length\n    right file\n    hot 2"), "needs exactly three 'in u64' fields"),
    (("    leaves cache\n\nmessage write", "    leaves disk\n\nmessage write"),
     "leaves 'disk', which the interface does not declare"),
])
def test_impossible_facts_are_refused(tmp_path, change, complaint):
    with pytest.raises(protocol.DeclarationError, match=complaint):
        protocol.parse(declare(tmp_path, FACTS.replace(*change)))


FRAME = """interface wire: A wire format.
    kind frame
    header_bytes 8
    field magic 0 u16: a constant
    field type 2 u8: the type
    field length 4 u32: payload bytes
    carries_kind none: nothing
    carries_kind data: the bytes

message hello 1: Hello.
    carries none

message data 2: Some bytes.
    carries data
"""


def test_frame_interface_generates_types_offsets_and_payload_kinds(tmp_path):
    header = "\n".join(protocol.outputs(protocol.parse(declare(tmp_path, FRAME)))["wire.h"])
    assert "WIRE_HELLO = 1," in header and "WIRE_TYPE_LAST = 2," in header
    assert "#define WIRE_HEADER_BYTES 8" in header and "#define WIRE_AT_LENGTH 4" in header
    assert "    case WIRE_DATA:\n        return WIRE_CARRIES_DATA;" in header


@pytest.mark.parametrize("change, complaint", [
    (("field length 4 u32", "field length 2 u32"), "not naturally aligned"),
    (("field length 4 u32", "field length 8 u32"), "ends past the 8-byte header"),
    (("field type 2 u8", "field type 1 u8"), "fields magic and type overlap"),
    (("    carries data\n", "    carries lots\n"), "carries 'lots', not one of the declared kinds"),
    (("    header_bytes 8\n", ""), "needs 'header_bytes N'"),
])
def test_malformed_frames_are_refused(tmp_path, change, complaint):
    with pytest.raises(protocol.DeclarationError, match=complaint):
        protocol.parse(declare(tmp_path, FRAME.replace(*change)))
