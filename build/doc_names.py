# doc_names.py: the names a document cites must exist (build/check-docs-index, `make docs-check`):
# a function (`name()` or `name(arguments)` in backticks), a constant (`FS_READBLOCK`), a file
# (`servers/fs/main.c`, `ring.c`, a relative link), a message declared in a code block (its name
# and number must be free in the protocol/*.messages file the text names before it) and a
# `make` target. What exists: the repository's tracked files, the identifiers its sources call
# or define, and the headers build/protocol.py generates. A document's own code blocks may
# introduce names (docs/walkthrough.md's example adds a request); prose may then cite them.
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

SOURCE_SUFFIXES = (".c", ".h", ".S", ".py", ".sh", ".mk", ".ld", ".messages", ".cfg")
SCRIPT_FOLDERS = ("build/", ".ci/", "tests/integration/run")  # scripts without a suffix
CHECKED_SUFFIXES = (".c", ".h", ".S", ".py", ".sh", ".mk", ".md", ".messages", ".ld", ".json", ".conf")
CHECKER_TEST = "tests/integration/test_docs_index.py"  # its wrong names must not count as existing
SPAN = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^\s*```")
CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")
FUNCTION_SPAN = re.compile(r"^([A-Za-z_]\w*)\((.*)\)$")
CONSTANT_SPAN = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
VALUE_SPAN = re.compile(r"^([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+) = (\d+)$")
MESSAGE_LINE = re.compile(r"^\s*message (\w+) (\d+):")
MESSAGES_FILE = re.compile(r"protocol/(\w+)\.messages")
LINK = re.compile(r"\]\(([^)\s]+)\)")
MAKE_LINE = re.compile(r"^\s*(?:\$ )?(make(?: [^`#;&|]*)?)$")

# Names of other systems the docs compare with or follow: POSIX and C (mmap's flags too),
# glibc's loader, the virtio specification's flags and requests, QEMU's plugin header.
FOREIGN_NAMES = {
    "pread", "pwrite", "read", "write", "fsync", "mmap", "malloc", "free", "memcpy", "memcmp",
    "printf", "open", "close", "qsort", "sync", "O_DIRECT", "O_SYNC", "MAP_SHARED",
    "MAP_PRIVATE", "MAP_FIXED", "PROT_READ", "PROT_WRITE", "msync", "munmap", "madvise",
    "MS_SYNC", "MS_ASYNC", "MADV_WILLNEED", "MADV_DONTNEED", "MADV_SEQUENTIAL", "LD_PRELOAD",
    "VIRTIO_BLK_T_FLUSH", "VIRTIO_BLK_T_GET_ID", "VIRTIO_NET_F_MAC", "VIRTQ_USED_F_NO_NOTIFY",
    "VIRTRING_AVAIL_F_NO_INTERRUPT", "VRING_AVAIL_F_NO_INTERRUPT", "qemu-plugin.h",
}
PLACEHOLDER = re.compile(r"(^|[/._])[A-Z]+(?=[/._]|$)")  # N.conf, NAME_dispatch.h, VERSION/


def tracked_files(repo):
    listed = subprocess.run(["git", "-C", str(repo), "ls-files", "--cached", "--others", "--exclude-standard"],
                            check=True, capture_output=True, text=True).stdout.split("\n")
    return {path for path in listed if path and (repo / path).is_file()}


def generated_headers(repo, additions=None):
    """{path under build/out/gen: text} of the headers build/protocol.py makes from protocol/,
    with `additions` ({interface: declaration text}) appended to their .messages files.
    A declaration the generator refuses raises ValueError with its message."""
    with tempfile.TemporaryDirectory() as scratch:
        declarations = []
        for path in sorted((repo / "protocol").glob("*.messages")):
            copy = Path(scratch) / "protocol" / path.name
            copy.parent.mkdir(exist_ok=True)
            copy.write_text(path.read_text() + ("\n" + additions[path.stem] if additions and path.stem in additions else ""))
            declarations.append(str(copy))
        out = Path(scratch) / "gen"
        generated = subprocess.run([sys.executable, str(repo / "build" / "protocol.py"), str(out), *declarations],
                                   capture_output=True, text=True)
        if generated.returncode != 0:
            raise ValueError((generated.stderr or generated.stdout).strip())
        return {"build/out/gen/" + str(path.relative_to(out)): path.read_text() for path in out.rglob("*.h")}


def is_source(path):
    if path == CHECKER_TEST:
        return False
    return path.endswith(SOURCE_SUFFIXES) or path.startswith(SCRIPT_FOLDERS) or Path(path).name == "Makefile"


def make_targets(makefile, repo):
    """The explicit targets of `makefile` and the build/*.mk files it includes."""
    targets = set()
    texts = [makefile.read_text()]
    for included in re.findall(r"^-?include\s+(\S+)", texts[0], re.M):
        if (repo / included).is_file():
            texts.append((repo / included).read_text())
    for text in texts:
        for line in text.splitlines():
            rule = re.match(r"^([A-Za-z0-9_./$()%-][^:=#\t]*?)\s*::?(?!=)", line)
            if rule:
                targets.update(rule.group(1).split())
    return targets


class Repository:
    """What a document may name: files, folders, functions, constants, messages, make targets."""

    def __init__(self, repo):
        self.repo = repo
        self.files = tracked_files(repo)
        generated = generated_headers(repo)
        self.files |= set(generated)
        self.folders = {str(Path(path).parent) + "/" for path in self.files}
        for folder in list(self.folders):
            parts = folder.rstrip("/").split("/")
            self.folders.update("/".join(parts[:i]) + "/" for i in range(1, len(parts)))
        self.basenames = {Path(path).name for path in self.files}
        texts = [(repo / path).read_text(errors="replace") for path in sorted(self.files - set(generated))
                 if is_source(path)] + list(generated.values())
        self.called = {name for text in texts for name in CALLED.findall(text)}
        self.identifiers = {name for text in texts for name in IDENTIFIER.findall(text)}
        self.upper_identifiers = [name for name in self.identifiers if name.isupper()]
        self.values = {}
        for text in generated.values():
            for defined, enumerated, value in re.findall(r"(?:#define (\w+)|^\s*(\w+) =) (\d+)\b", text, re.M):
                self.values[defined or enumerated] = int(value)
        self.messages = {}
        for path in repo.glob("protocol/*.messages"):
            found = [MESSAGE_LINE.match(line) for line in path.read_text().splitlines()]
            self.messages[path.stem] = {(match.group(1), int(match.group(2))) for match in found if match}
        self.targets = {".": make_targets(repo / "Makefile", repo)}

    def targets_of(self, folder):
        if folder not in self.targets:
            makefile = self.repo / folder / "Makefile"
            self.targets[folder] = make_targets(makefile, self.repo) if makefile.is_file() else None
        return self.targets[folder]

    def has_constant(self, name):
        """An identifier, whole or as the tail of one (`SELFTEST_PING` of MESSAGE_SELFTEST_PING)."""
        return name in self.identifiers or any(other.endswith("_" + name) for other in self.upper_identifiers)

    def has_path(self, path):
        """A tracked or generated file or folder, by its path from the root or its tail."""
        if path.endswith("/"):
            return path in self.folders or any(folder.endswith("/" + path) for folder in self.folders)
        if "/" not in path:
            return path in self.basenames
        return path in self.files or path + "/" in self.folders or any(
            file.endswith("/" + path) for file in self.files)


def split_fences(text):
    """(prose lines with their numbers, code lines with their numbers)."""
    prose, code, inside, indented, previous_blank = [], [], False, False, True
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        # an indented block starts after a blank line and goes on while its lines are indented
        indented = line.startswith("    ") and (indented or previous_blank) or (indented and not line.strip())
        (code if inside or indented else prose).append((number, line))
        previous_blank = not line.strip()
    return prose, code


def path_of(span):
    """The path a span names: without a line number (`:57`), a test (`::test_x`) or a colon."""
    return re.sub(r"(::\w+|:\d+(-\d+)?|:)$", "", span)


def looks_like_path(span):
    if span in FOREIGN_NAMES:
        return False
    if any(character in span for character in " *?{}<>$|\\,=@#") or span.startswith(("/", "~", "-", "http")):
        return False
    path = path_of(span)
    if path.startswith("build/out/") or PLACEHOLDER.search(path) or re.match(r"^\.\w+$", path):
        return False  # an output of the build, a placeholder (VERSION, N.conf) or a suffix (`.h`)
    first = path.split("/")[0]
    if "/" in path and first in ("kernel", "mkernel", "pkernel", "servers", "lib", "apps", "build", "tests",
                                 "docs", "protocol", ".ci"):
        return True
    return path.endswith(CHECKED_SUFFIXES) and re.match(r"^[\w./+-]+$", path) is not None


def make_problems(command, repository):
    try:
        words = shlex.split(command.rstrip("\\ "))[1:]
    except ValueError:
        words = command.split()[1:]
    folder, problems = ".", []
    index = 0
    while index < len(words):
        word = words[index]
        if word == "-C" and index + 1 < len(words):
            folder = words[index + 1]
            index += 2
            continue
        index += 1
        if word.startswith("-") or "=" in word or not re.match(r"^[\w.-]+$", word) or word.isupper():
            continue  # an option, a variable, or a placeholder (`make TARGET`)
        targets = repository.targets_of(folder)
        if targets is None:
            problems.append(f"`make -C {folder}`: {folder}/Makefile does not exist")
        elif word not in targets:
            problems.append(f"`make {word}`: no such target in {folder}/Makefile")
    return problems


def interface_mentions(prose, code):
    """(line number, interface) for every `protocol/NAME.messages` the document names, in order."""
    return sorted((number, interface) for number, line in prose + code for interface in MESSAGES_FILE.findall(line))


def interface_before(number, mentions):
    """The interface of the protocol/*.messages file named last before line `number`, or None."""
    named = [interface for mentioned, interface in mentions if mentioned < number]
    return named[-1] if named else None


def declared_messages(code, prose):
    """{interface: the text of the messages the document's code blocks declare for it} (the
    interface of a block is that of the protocol/*.messages file named last before it). A
    declaration is its `message` line and the lines after it indented deeper."""
    mentions = interface_mentions(prose, code)
    declared, current, indent, previous = {}, None, 0, 0
    for number, line in code:
        started = MESSAGE_LINE.match(line)
        depth = len(line) - len(line.lstrip())
        if started:
            current, indent = interface_before(number, mentions), depth
            if current:
                declared.setdefault(current, []).append(line.strip())
        elif current and number == previous + 1 and line.strip() and depth > indent:
            declared[current].append("    " + line.strip())
        else:
            current = None
        previous = number
    return {interface: "\n".join(lines) + "\n" for interface, lines in declared.items()}


def message_problems(code, prose, repository):
    """A message declared in a code block must be new to the protocol/*.messages file the
    document names last before the block."""
    mentions, problems = interface_mentions(prose, code), []
    for number, line in code:
        declared = MESSAGE_LINE.match(line)
        interface = interface_before(number, mentions) if declared else None
        if interface not in repository.messages:
            continue
        name, value = declared.group(1), int(declared.group(2))
        for other_name, other_value in repository.messages[interface]:
            if other_name == name or other_value == value:
                problems.append(f"line {number}: `message {name} {value}` is not new in protocol/{interface}.messages:"
                                f" it has `message {other_name} {other_value}`")
    return problems


def function_problems(name, span, known, repository):
    if name in repository.called or name in known or name in FOREIGN_NAMES:
        return []
    return [f"`{span}`: no function {name} in the sources"]


def constant_problems(span, known, repository):
    value = VALUE_SPAN.match(span)
    if value:
        name, number = value.group(1), int(value.group(2))
        if name in repository.values and repository.values[name] != number:
            return [f"`{span}`: {name} is {repository.values[name]}"]
        return []
    if repository.has_constant(span) or span in known or span in FOREIGN_NAMES:
        return []
    return [f"`{span}`: no such name in the sources"]


def path_problems(span, repository):
    if not looks_like_path(span):
        return []
    if not repository.has_path(path_of(span)):
        return [f"`{span}`: no such file or folder"]
    test = re.search(r"::(\w+)$", span)
    if test and test.group(1) not in repository.identifiers:
        return [f"`{span}`: no test {test.group(1)}"]
    return []


def span_problems(span, known, repository):
    """What is wrong with one code span of the prose: a function, constant, make command or path."""
    function = FUNCTION_SPAN.match(span)
    if function and function.group(1).isupper():
        span = function.group(1)  # a message with its fields: `SYS_WAIT(pid, &code)`
    elif function:
        return function_problems(function.group(1), span, known, repository)
    if CONSTANT_SPAN.match(span) or VALUE_SPAN.match(span):
        return constant_problems(span, known, repository)
    if span.startswith("make ") or span == "make":
        return make_problems(span, repository)
    return path_problems(span, repository)


def link_problems(line, document):
    """A relative markdown link must lead to a file or folder beside `document`."""
    problems = []
    for target in LINK.findall(line):
        path = target.split("#", 1)[0]
        if path and not path.startswith(("http:", "https:", "mailto:")) and not (document.parent / path).exists():
            problems.append(f"link ({target}): no such file")
    return problems


def document_problems(document, repository):
    """Every name `document` (a Path) cites that does not exist, as 'line N: ...' texts."""
    text = document.read_text()
    prose, code = split_fences(text)
    known = {name for _, line in code for name in IDENTIFIER.findall(line)}
    problems = message_problems(code, prose, repository)
    additions = declared_messages(code, prose)
    if additions and not problems:
        try:
            generated = generated_headers(repository.repo, additions)
            known |= {name for text in generated.values() for name in IDENTIFIER.findall(text)}
        except ValueError as refused:
            problems.append(f"its messages do not build: {refused}")
    for number, line in prose:
        for span in SPAN.findall(line):
            problems += [f"line {number}: {problem}" for problem in span_problems(span.strip(), known, repository)]
        problems += [f"line {number}: {problem}" for problem in link_problems(line, document)]
    for number, line in code:
        command = MAKE_LINE.match(line)
        if command:
            problems += [f"line {number}: {problem}" for problem in make_problems(command.group(1), repository)]
    return problems


def documents(repo):
    return [repo / "README.md"] + sorted((repo / "docs").glob("*.md"))
