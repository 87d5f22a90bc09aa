# The PC console of a run (docs/runner.md, "The screen and the keyboard"): which keyboard QEMU
# gives the guest (--keyboard ps2|usb), whether it has a serial port (--no-serial), a display
# for a person (--display none|vnc), keys typed on the keyboard through QEMU's monitor once the
# guest's shell reads (--keys) and the screen saved as PNG when the guest ends or at the
# timeout (--screenshot). A Session drives QEMU's QMP socket from a thread of its own.
import json
import os
import re
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Optional

KEYBOARDS = ("ps2", "usb")
VNC_HOST = "127.0.0.1"  # a person reaches it through this machine (ssh -L 5900:...)
HOLD_MS = 50  # how long each key is held down
KEY_GAP_SECONDS = 0.1  # between keys: QEMU's USB keyboard queues only 16 events
READY_POLL_SECONDS = 0.25
MKERNEL_VIRTUAL_BASE = 0xffffffff80000000  # kernel/layout.h: the image's physical = virtual - this
INPUT_SYMBOL = "console_input_record"  # kernel/console_input.h: magic, keyboards_ready, reader_waiting
INPUT_MAGIC = 0x504E4943
KEYBOARD_BITS = {"ps2": 1, "usb": 2}  # CONSOLE_KEYBOARD_PS2, CONSOLE_KEYBOARD_USB

# Characters --keys can type: QEMU key names (qcodes) on a US keyboard, shifted or not.
_PLAIN = {" ": "spc", "\n": "ret", "\t": "tab", "\b": "backspace", "-": "minus", "=": "equal",
          "[": "bracket_left", "]": "bracket_right", "\\": "backslash", ";": "semicolon",
          "'": "apostrophe", "`": "grave_accent", ",": "comma", ".": "dot", "/": "slash"}
_SHIFTED = {"!": "1", "@": "2", "#": "3", "$": "4", "%": "5", "^": "6", "&": "7", "*": "8",
            "(": "9", ")": "0", "_": "minus", "+": "equal", "{": "bracket_left",
            "}": "bracket_right", "|": "backslash", ":": "semicolon", '"': "apostrophe",
            "~": "grave_accent", "<": "comma", ">": "dot", "?": "slash"}
_ESCAPES = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\"}


class ConsoleUsageError(Exception):
    """A console flag that cannot be run (options.py turns it into a usage error)."""


@dataclass
class ConsoleOptions:
    keyboard: Optional[str] = None  # None: the machine's own (PS/2 on pc and q35)
    keys: Optional[str] = None  # decoded: "\n" is Enter
    screenshot: Optional[str] = None
    display: str = "none"  # "none", or "vnc:N" (display N, TCP port 5900 + N)
    serial: bool = True


def add_flags(parser):
    parser.add_argument("--keyboard", choices=KEYBOARDS,
                        help="ps2: the machine's i8042 keyboard; usb: a USB keyboard on an xHCI "
                        "controller and no i8042 (default: the machine's PS/2 keyboard)")
    parser.add_argument("--keys", metavar="TEXT",
                        help="type TEXT on the keyboard once the shell reads (\\n Enter, \\t Tab, "
                        "\\b Backspace, \\\\ a backslash); the shell is then interactive")
    parser.add_argument("--screenshot", metavar="FILE",
                        help="save the screen as PNG when the guest ends or at the timeout")
    parser.add_argument("--display", default="none", metavar="none|vnc[:N]",
                        help="none (default), or a VNC server on 127.0.0.1 display N "
                        "(port 5900+N, default 0) for a person to watch and type")
    parser.add_argument("--no-serial", action="store_true",
                        help="a machine without a serial port (as most new PCs): output is only on "
                        "the screen; the runner then sees no console lines")


def parse_flags(args):
    """ConsoleOptions from argparse's args; ConsoleUsageError for what cannot run."""
    keys = decode_keys(args.keys) if args.keys is not None else None
    if keys is not None and args.cmd is not None:
        raise ConsoleUsageError("--keys types into the interactive shell: give no --cmd")
    if keys == "":
        raise ConsoleUsageError("--keys: nothing to type")
    for character in keys or "":
        key_names(character)  # refuses what a US keyboard cannot type
    return ConsoleOptions(keyboard=args.keyboard, keys=keys,
                          screenshot=os.path.abspath(args.screenshot) if args.screenshot else None,
                          display=_parse_display(args.display), serial=not args.no_serial)


def _parse_display(text):
    if text == "none":
        return "none"
    match = re.fullmatch(r"vnc(?::(\d{1,2}))?", text)
    if not match:
        raise ConsoleUsageError(f"--display {text!r}: use none, vnc or vnc:N")
    return f"vnc:{int(match.group(1) or 0)}"


def decode_keys(text):
    """--keys' escapes: \\n Enter, \\t Tab, \\b Backspace, \\\\ a backslash."""
    out, index = [], 0
    while index < len(text):
        if text[index] == "\\" and index + 1 < len(text) and text[index + 1] in _ESCAPES:
            out.append(_ESCAPES[text[index + 1]])
            index += 2
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def key_names(character):
    """The QEMU key names that type `character` (with "shift" first for a shifted one)."""
    if character.isascii() and (character.islower() or character.isdigit()):
        return [character]
    if character.isascii() and character.isupper():
        return ["shift", character.lower()]
    if character in _PLAIN:
        return [_PLAIN[character]]
    if character in _SHIFTED:
        return ["shift", _SHIFTED[character]]
    raise ConsoleUsageError(f"--keys: {character!r} cannot be typed on a US keyboard")


def someone_types(console):
    """True when keys reach the shell from somewhere other than a terminal."""
    return console.keys is not None or console.display != "none"


def adapt_argv(argv, console, boot):
    """The QEMU argv with the console's choices: no serial port, a VNC display, the keyboard."""
    adapted = list(argv)
    for index in range(len(adapted) - 1):
        if adapted[index] == "-serial" and adapted[index + 1] == "stdio" and not console.serial:
            adapted[index + 1] = "none"
        if adapted[index] == "-display" and adapted[index + 1] == "none" and console.display != "none":
            adapted[index + 1] = f"vnc={VNC_HOST}:{console.display.split(':')[1]}"
    return adapted + keyboard_argv(console.keyboard, boot)


def keyboard_argv(keyboard, boot):
    """usb: QEMU's usb-kbd on the xHCI controller (the USB stick's, for a stick boot) and no
    i8042, as on a PC whose only keyboard is on USB."""
    if keyboard != "usb":
        return []
    controller = [] if boot.startswith("usb") else ["-device", "qemu-xhci,id=xhci"]
    return ["-machine", "i8042=off"] + controller + ["-device", "usb-kbd,bus=xhci.0"]


def needs_session(console):
    return console.keys is not None or console.screenshot is not None


def input_record_physical(mkernel_elf):
    """Where kernel/console_input.h's record lies in guest memory, from the image's symbols."""
    try:
        listing = subprocess.run(["nm", mkernel_elf], capture_output=True, text=True).stdout
    except OSError:
        return None
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == INPUT_SYMBOL:
            return int(parts[0], 16) - MKERNEL_VIRTUAL_BASE
    return None


class _Qmp:
    """A QMP connection: commands answered in order, events kept aside."""

    def __init__(self, path, deadline):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        while True:
            try:
                self.socket.connect(path)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.buffer = b""
        self.events = []
        self._read_message(deadline)  # the greeting
        self.command("qmp_capabilities")

    def _read_message(self, deadline):
        while b"\n" not in self.buffer:
            self.socket.settimeout(max(deadline - time.monotonic(), 0.01))
            chunk = self.socket.recv(65536)
            if not chunk:
                raise OSError("QEMU closed its QMP socket")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def command(self, name, arguments=None, seconds=10.0):
        request = {"execute": name}
        if arguments is not None:
            request["arguments"] = arguments
        self.socket.sendall(json.dumps(request).encode() + b"\n")
        deadline = time.monotonic() + seconds
        while True:
            message = self._read_message(deadline)
            if "event" in message:
                self.events.append(message)
            elif "error" in message:
                raise OSError(f"QMP {name}: {message['error'].get('desc', message['error'])}")
            elif "return" in message:
                return message["return"]

    def wait_event(self, seconds):
        """The next event within `seconds`, else None."""
        if self.events:
            return self.events.pop(0)
        try:
            message = self._read_message(time.monotonic() + seconds)
        except socket.timeout:
            return None
        return message if "event" in message else None

    def close(self):
        self.socket.close()


class Session:
    """Types --keys once the guest's shell reads, and saves --screenshot when the guest ends
    (QEMU pauses at the guest's shutdown instead of exiting; the screen is saved, then QEMU is
    told to quit and exits with the guest's status) or when told the run timed out."""

    def __init__(self, console, mkernel_elf):
        self.console = console
        self.mkernel_elf = mkernel_elf
        self.directory = tempfile.mkdtemp(prefix="formica-qmp-")
        self.path = os.path.join(self.directory, "qmp.sock")
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.qmp = None
        self.thread = None
        self.screenshot_saved = False
        self.notes = []

    def qemu_args(self):
        argv = ["-qmp", f"unix:{self.path},server=on,wait=off"]
        if self.console.screenshot:
            argv += ["-action", "shutdown=pause"]  # the screen stays until it is saved
        return argv

    def start(self):
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _note(self, message):
        self.notes.append(message)

    def _run(self):
        try:
            self.qmp = _Qmp(self.path, time.monotonic() + 30)
            if self.console.keys is not None and self._wait_until_ready():
                self._type(self.console.keys)
            if self.console.screenshot:
                self._save_at_shutdown()
        except (OSError, ValueError) as error:
            if not self.stopping.is_set():
                self._note(f"console: QMP: {error}")

    def _ask(self, name, arguments=None):
        with self.lock:
            return self.qmp.command(name, arguments)

    def _read_input_words(self, physical):
        answer = self._ask("human-monitor-command", {"command-line": f"xp /3wx {physical:#x}"})
        words = re.findall(r"0x([0-9a-fA-F]{8})", answer.split(":", 1)[-1])
        return [int(word, 16) for word in words[:3]]

    def _wait_until_ready(self):
        """Waits until the guest's keyboard is up and its shell waits for input (the words of
        kernel/console_input.h's record, read from guest memory through the monitor)."""
        physical = input_record_physical(self.mkernel_elf)
        if physical is None:
            self._note(f"console: no {INPUT_SYMBOL} in {self.mkernel_elf}: --keys not typed")
            return False
        wanted = KEYBOARD_BITS[self.console.keyboard or "ps2"]
        while not self.stopping.is_set():
            words = self._read_input_words(physical)
            if len(words) == 3 and words[0] == INPUT_MAGIC and words[1] & wanted and words[2]:
                return True
            self.stopping.wait(READY_POLL_SECONDS)
        return False

    def _type(self, text):
        for character in text:
            if self.stopping.is_set():
                return
            keys = [{"type": "qcode", "data": name} for name in key_names(character)]
            self._ask("send-key", {"keys": keys, "hold-time": HOLD_MS})
            time.sleep(HOLD_MS / 1000 + KEY_GAP_SECONDS)
        self._note(f"console: typed {len(text)} keys")

    def _save_at_shutdown(self):
        while not self.stopping.is_set():
            with self.lock:
                event = self.qmp.wait_event(0.2)
            if event is None or event.get("event") not in ("SHUTDOWN", "STOP"):
                continue
            if self.save_screen():
                self._note(f"console: the guest ended; screen saved to {self.console.screenshot}")
            with self.lock:
                self.qmp.socket.sendall(b'{"execute": "quit"}\n')
            return

    def save_screen(self):
        """Saves the screen now (once); False when QEMU could not."""
        if self.screenshot_saved or self.qmp is None:
            return self.screenshot_saved
        try:
            self._ask("screendump", {"filename": self.console.screenshot, "format": "png"})
            self.screenshot_saved = True
        except OSError as error:
            self._note(f"console: screendump failed: {error}")
        return self.screenshot_saved

    def at_timeout(self):
        """The run timed out: stop typing and save the screen as it is."""
        self.stopping.set()
        if self.console.screenshot and self.save_screen():
            self._note(f"console: at the timeout, screen saved to {self.console.screenshot}")

    def finish(self):
        """After QEMU has ended: what happened, as lines for stderr."""
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(2.0)
        if self.console.screenshot and not self.screenshot_saved:
            self._note("console: no screenshot: QEMU ended before the screen could be saved "
                       "(a QEMU before 9.0 exits at isa-debug-exit without pausing)")
        if self.qmp is not None:
            self.qmp.close()
        for remove, target in ((os.remove, self.path), (os.rmdir, self.directory)):
            try:
                remove(target)
            except OSError:
                pass
        return list(self.notes)
