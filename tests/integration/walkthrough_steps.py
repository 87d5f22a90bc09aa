# walkthrough_steps.py: reads the marked code blocks of docs/walkthrough.md and applies them
# to a copy of the repository (tests/integration/test_walkthrough.py). A block is marked by
# the HTML comment on the line before its fence:
#   <!-- walkthrough: append FILE -->               the block goes at the end of FILE
#   <!-- walkthrough: insert FILE before TEXT -->   the block goes before FILE's line that
#                                                   starts with TEXT (exactly one must)
#   <!-- walkthrough: run -->                       the block's commands run in the copy (bash)
import re
import subprocess
from pathlib import Path
from typing import List, NamedTuple

MARK = re.compile(r"^\s*<!-- walkthrough: (append|insert|run)(?: (\S+))?(?: before (.*?))? -->\s*$")
FENCE = re.compile(r"^(\s*)```")


class Step(NamedTuple):
    action: str  # "append", "insert" or "run"
    path: str    # relative to the repository ("" for run)
    before: str  # insert: the start of the line the block goes before
    text: str    # the block, its fence's indentation taken off


def steps_of(document: Path) -> List[Step]:
    """The marked blocks of `document`, in order; ValueError for a mark without a block."""
    lines, steps = document.read_text().splitlines(), []
    for index, line in enumerate(lines):
        mark = MARK.match(line)
        if not mark:
            continue
        fence = FENCE.match(lines[index + 1]) if index + 1 < len(lines) else None
        if not fence:
            raise ValueError(f"{document}:{index + 1}: a walkthrough mark not followed by a code block")
        indent, body = len(fence.group(1)), []
        for block_line in lines[index + 2:]:
            if FENCE.match(block_line):
                break
            body.append(block_line[indent:] if block_line[:indent].strip() == "" else block_line)
        action, path, before = mark.group(1), mark.group(2) or "", mark.group(3) or ""
        if (action == "run") != (path == ""):
            raise ValueError(f"{document}:{index + 1}: append and insert name a file, run none")
        if action == "insert" and not before:
            raise ValueError(f"{document}:{index + 1}: insert needs 'before TEXT'")
        steps.append(Step(action, path, before, "\n".join(body) + "\n"))
    return steps


def apply(step: Step, tree: Path):
    """Applies one step to the copy of the repository at `tree`; a run step that fails
    raises CalledProcessError with its output."""
    if step.action == "run":
        subprocess.run(["bash", "-euo", "pipefail", "-c", step.text], cwd=tree, check=True, capture_output=True,
                       text=True, stdin=subprocess.DEVNULL, timeout=900)
        return
    target = tree / step.path
    text = target.read_text()
    if step.action == "append":
        target.write_text(text + ("" if text.endswith("\n") else "\n") + "\n" + step.text)
        return
    lines = text.splitlines(keepends=True)
    found = [number for number, line in enumerate(lines) if line.startswith(step.before)]
    if len(found) != 1:
        raise ValueError(f"{step.path}: {len(found)} lines start with {step.before!r}, not one")
    lines.insert(found[0], step.text)
    target.write_text("".join(lines))
