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
    table = "\n".join(protocol.outputs(interface)["syscall_table.h"])
    assert "frame->rdi > UINT32_MAX" in table
    assert "(int64_t)frame->rsi != (int32_t)frame->rsi" in table
    assert "return sys_wait((uint32_t)frame->rdi, (int32_t)frame->rsi, (uint64_t)frame->rdx);" in table


def test_committed_reference_is_current():
    declarations = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "protocol").glob("*.messages"))
    result = subprocess.run([sys.executable, "build/protocol.py", "--check-docs", "docs/protocol.md",
                             *declarations], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
