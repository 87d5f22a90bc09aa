#!/usr/bin/env python3
# build/flm_translate.py: seed 000's translator (its Fig. 6) for the `flm` qualifier: a C source
# whose large arrays are declared `flm TYPE NAME[D1][D2]...;` becomes one that takes each from
# libflmalloc (flcalloc, zeroed like a static array) at the start of its block (main's body for
# a file-scope array), refers to it through a pointer named __flm_NAME, and flfrees it at the
# block's end and before each return out of it. docs/files.md, "The flm translator".
#   python3 build/flm_translate.py IN.flm OUT.c
import re
import sys
from dataclasses import dataclass, field
from typing import List, Optional

TOKEN = re.compile(r"""
    (?P<comment>/\*.*?\*/|//[^\n]*)
  | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<directive>^[ \t]*\#(?:\\\n|[^\n])*)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<space>\n|[ \t\r\f\v]+)
  | (?P<punct>->|\+\+|--|<<=|>>=|<<|>>|[<>=!+\-*/%&|^]=|&&|\|\||\#\#|.)
""", re.VERBOSE | re.DOTALL | re.MULTILINE)
CODE = {"name", "number", "string", "punct"}  # what is not space, comment or directive
NAME = re.compile(r"[A-Za-z_]\w*")
PREFIX = "__flm_"


class TranslateError(Exception):
    """A source the translator refuses: `line` says where."""

    def __init__(self, line, message):
        super().__init__(f"line {line}: {message}")


@dataclass
class Token:
    kind: str
    text: str
    line: int


@dataclass
class Block:
    open: int             # index of its `{`
    close: int            # index of its `}`
    function: Optional[str] = None  # the function's name when the block is its body


@dataclass
class FlmArray:
    name: str
    element: str          # the element type, e.g. "int" or "unsigned long"
    storage: str          # "static" or ""
    dims: List[str]       # each dimension's text
    start: int            # the declaration's tokens [start, end]: `flm` .. `;`
    end: int
    block: Optional[Block]  # None: file scope
    uses: List[int] = field(default_factory=list)


def lex(source):
    tokens, line = [], 1
    for match in TOKEN.finditer(source):
        kind = match.lastgroup
        tokens.append(Token(kind, match.group(), line))
        line += match.group().count("\n")
    return tokens


def code_after(tokens, index):
    """The index of the next code token after `index` (len(tokens) at the end)."""
    index += 1
    while index < len(tokens) and tokens[index].kind not in CODE:
        index += 1
    return index


def code_before(tokens, index):
    index -= 1
    while index >= 0 and tokens[index].kind not in CODE:
        index -= 1
    return index


def matching(tokens, index, opening, closing):
    """The index of the token closing the `opening` at `index`."""
    depth = 0
    for position in range(index, len(tokens)):
        if tokens[position].kind != "punct":
            continue
        if tokens[position].text == opening:
            depth += 1
        elif tokens[position].text == closing:
            depth -= 1
            if depth == 0:
                return position
    raise TranslateError(tokens[index].line, f"unbalanced '{opening}'")


def function_name(tokens, brace):
    """The name of the function whose body opens at `brace`, or None for another block."""
    before = code_before(tokens, brace)
    if before < 0 or tokens[before].text != ")":
        return None
    depth = 0
    for position in range(before, -1, -1):
        text = tokens[position].text if tokens[position].kind == "punct" else ""
        depth += text == ")"
        depth -= text == "("
        if depth == 0:
            name = code_before(tokens, position)
            return tokens[name].text if name >= 0 and tokens[name].kind == "name" else None
    return None


def blocks_of(tokens):
    """Every brace block, outermost first within each nesting (by opening position)."""
    blocks, stack = [], []
    for index, token in enumerate(tokens):
        if token.kind != "punct":
            continue
        if token.text == "{":
            at_file_scope = not stack
            stack.append(Block(index, -1, function_name(tokens, index) if at_file_scope else None))
        elif token.text == "}":
            if not stack:
                raise TranslateError(token.line, "'}' without '{'")
            block = stack.pop()
            block.close = index
            blocks.append(block)
    if stack:
        raise TranslateError(tokens[stack[-1].open].line, "'{' never closed")
    return sorted(blocks, key=lambda block: block.open)


def innermost(blocks, index):
    inside = [block for block in blocks if block.open < index < block.close]
    return max(inside, key=lambda block: block.open) if inside else None


def storage_before(tokens, flm):
    """The storage words written before `flm` (`static flm int a[N];`) and the index of the
    first of them (`flm`'s own when there are none)."""
    start, words = flm, []
    position = code_before(tokens, flm)
    while position >= 0 and tokens[position].kind == "name" and \
            tokens[position].text in ("static", "extern", "register", "auto", "typedef"):
        words.append(tokens[position].text)
        start = position
        position = code_before(tokens, position)
    return words, start


def parse_declaration(tokens, flm, blocks):
    """The array declared by the `flm` at index `flm`."""
    line = tokens[flm].line
    storage_words, start = storage_before(tokens, flm)
    end = flm
    while end < len(tokens) and tokens[end].text not in (";", "=", "{", "}"):
        end += 1
    if end == len(tokens):
        raise TranslateError(line, "an flm declaration without ';'")
    stop = tokens[end].text
    if stop in "{}":
        raise TranslateError(line, "an flm declaration ends with ';' before any brace")
    code = [index for index in range(flm + 1, end) if tokens[index].kind in CODE]
    bracket = next((n for n, index in enumerate(code) if tokens[index].text == "["), None)
    if bracket is None or bracket < 2 or tokens[code[bracket - 1]].kind != "name":
        raise TranslateError(line, "flm qualifies an array declaration: flm TYPE NAME[N]...;")
    name = tokens[code[bracket - 1]].text
    if stop == "=":
        raise TranslateError(line, f"flm array {name}: an initializer is not translated")
    words = storage_words + [tokens[index].text for index in code[:bracket - 1]]
    for word in words:
        if not NAME.fullmatch(word) and word != "*":
            raise TranslateError(line, f"'{word}' in the element type of flm array {name}")
    storage = "static" if "static" in words else ""
    if any(word in ("extern", "register", "auto", "typedef") for word in words):
        raise TranslateError(line, f"flm array {name}: only static may qualify it")
    element = " ".join(word for word in words if word != "static")
    dims, position = [], bracket
    while position < len(code) and tokens[code[position]].text == "[":
        close = matching(tokens, code[position], "[", "]")
        text = "".join(tokens[index].text for index in range(code[position] + 1, close)).strip()
        if not text:
            raise TranslateError(line, f"flm array {name}: every dimension needs a size")
        dims.append(text)
        position = next((n for n, index in enumerate(code) if index > close), len(code))
    if position != len(code):
        rest = tokens[code[position]].text
        what = "an initializer" if rest == "=" else "more than one declarator" if rest == "," \
            else f"'{rest}'"
        raise TranslateError(line, f"flm array {name}: {what} is not translated")
    block = innermost(blocks, flm)
    if block is not None and storage:
        raise TranslateError(line, f"flm array {name}: a static array inside a function keeps its "
                             "values across calls; declare it at file scope")
    return FlmArray(name, element, storage, dims, start, end, block)


def pointer_declarator(array, name):
    """`TYPE (*NAME)[D2]...` for the rest of the dimensions (`TYPE *NAME` for one)."""
    if len(array.dims) == 1:
        return f"{array.element} *{name}"
    return f"{array.element} (*{name})" + "".join(f"[{dim}]" for dim in array.dims[1:])


def pointer_type(array):
    """The pointer's own type: `TYPE *`, or `TYPE (*)[D2]...`."""
    if len(array.dims) == 1:
        return f"{array.element} *"
    return f"{array.element} (*)" + "".join(f"[{dim}]" for dim in array.dims[1:])


def array_type(array):
    """A pointer to the whole array, what `&NAME` was: `TYPE (*)[D1][D2]...`."""
    return f"{array.element} (*)" + "".join(f"[{dim}]" for dim in array.dims)


def allocation(array):
    """D1 rows of the rest, zeroed as a static array is; a failure ends the program (flcalloc
    says why)."""
    pointer = PREFIX + array.name
    return (f"{pointer} = ({pointer_type(array)})flcalloc((size_t)({array.dims[0]}), "
            f"sizeof(*{pointer})); if ({pointer} == NULL) abort();")


def indentation(tokens, index):
    """The blanks that start the line of token `index`."""
    while index > 0 and "\n" not in tokens[index - 1].text:
        index -= 1
    return tokens[index].text if tokens[index].kind == "space" and index < len(tokens) else ""


def frees(arrays):
    return " ".join(f"flfree({PREFIX}{array.name});" for array in reversed(arrays))


def scope_range(array, tokens):
    """The tokens where the array's name means it: after its declaration, to its block's end."""
    return array.end + 1, array.block.close if array.block else len(tokens)


def find_uses(arrays, tokens):
    """The tokens that name each array: in its scope, and in a macro's body anywhere in that
    scope's text (a file-scope array's: anywhere in the file), since a macro means its names
    where it is used."""
    for array in arrays:
        first, last = scope_range(array, tokens)
        macros_from = array.block.open if array.block else 0
        for index in range(macros_from, last):
            token = tokens[index]
            if token.kind == "directive" and re.search(rf"\b{array.name}\b", token.text):
                array.uses.append(index)
        for index in range(first, last):
            token = tokens[index]
            if token.kind != "name" or token.text != array.name:
                continue
            before = code_before(tokens, index)
            if before >= 0 and tokens[before].text in (".", "->"):
                continue  # a member of that name
            array.uses.append(index)


def sizeof_span(tokens, index):
    """For a use at `index`: the span [first, last] of `sizeof NAME` or `sizeof(NAME)` around
    it, or None."""
    after = code_after(tokens, index)
    before = code_before(tokens, index)
    if after < len(tokens) and tokens[after].text == "[":
        return None
    if before >= 0 and tokens[before].text == "sizeof":
        return before, index
    if before >= 0 and tokens[before].text == "(" and after < len(tokens) and \
            tokens[after].text == ")":
        keyword = code_before(tokens, before)
        if keyword >= 0 and tokens[keyword].text == "sizeof":
            return keyword, after
    return None


def address_span(tokens, index):
    """`&NAME` (the whole array's address): the span, or None."""
    after = code_after(tokens, index)
    before = code_before(tokens, index)
    if after < len(tokens) and tokens[after].text == "[":
        return None
    if before >= 0 and tokens[before].text == "&":
        return before, index
    return None


def returns_in(tokens, block, arrays):
    """Each `return ...;` inside `block` as (start, end, the arrays of `arrays` taken before
    it); refused when its value names one of them (it would be read after the free)."""
    found = []
    for index in range(block.open + 1, block.close):
        if tokens[index].kind != "name" or tokens[index].text != "return":
            continue
        end = index
        while end < block.close and tokens[end].text != ";":
            end += 1
        taken = [array for array in arrays if array.block is None or array.end < index]
        named = {tokens[position].text for position in range(index, end)
                 if tokens[position].kind == "name"}
        for array in taken:
            if array.name in named:
                raise TranslateError(tokens[index].line, f"a return reads flm array "
                                     f"{array.name}, which is freed first: keep the value in a "
                                     "variable")
        if taken:
            found.append((index, end, taken))
    return found


def translate(source):
    tokens = lex(source)
    blocks = blocks_of(tokens)
    arrays = [parse_declaration(tokens, index, blocks) for index, token in enumerate(tokens)
              if token.kind == "name" and token.text == "flm"]
    if not arrays:
        return source
    for number, array in enumerate(arrays):
        if any(other.name == array.name for other in arrays[:number]):
            raise TranslateError(tokens[array.start].line, f"flm array {array.name} declared "
                                 "twice")
    file_scope = [array for array in arrays if array.block is None]
    main = next((block for block in blocks if block.function == "main"), None)
    if file_scope and main is None:
        raise TranslateError(tokens[file_scope[0].start].line,
                             "file-scope flm arrays are taken at the start of main(), which this "
                             "file does not define")
    find_uses(arrays, tokens)
    replaced = {}  # first token index -> (last token index, new text)
    before = {}    # token index -> text put before it
    after = {}     # token index -> text put after it
    for array in arrays:
        declaration = f"{array.storage + ' ' if array.storage else ''}" \
            f"{pointer_declarator(array, PREFIX + array.name)};"
        if array.block is not None:
            declaration += " " + allocation(array)
        replaced[array.start] = (array.end, declaration)
        for use in array.uses:
            if tokens[use].kind == "directive":
                text = re.sub(rf"\b{array.name}\b", PREFIX + array.name, tokens[use].text)
                replaced[use] = (use, text)
                continue
            span = sizeof_span(tokens, use)
            if span is not None:
                whole = " * ".join(f"({dim})" for dim in array.dims)
                replaced[span[0]] = (span[1], f"({whole} * sizeof({array.element}))")
                continue
            span = address_span(tokens, use)
            if span is not None:
                replaced[span[0]] = (span[1], f"(({array_type(array)}){PREFIX}{array.name})")
                continue
            replaced[use] = (use, PREFIX + array.name)
    if file_scope:
        inside = "\n" + indentation(tokens, main.open) + "    "
        after[main.open] = "".join(inside + allocation(array) for array in file_scope)
    scopes = {}
    for array in arrays:
        scopes.setdefault(array.block.open if array.block else main.open, []).append(array)
    for opening, owned in scopes.items():
        block = next(block for block in blocks if block.open == opening)
        for start, end, taken in returns_in(tokens, block, owned):
            before[start] = before.get(start, "") + "{ " + frees(taken) + " "
            after[end] = after.get(end, "") + " }"
        before[block.close] = before.get(block.close, "") + "    " + frees(owned) + "\n" + \
            indentation(tokens, block.close)
    output, index = ["#include <formica/flmalloc.h>\n#include <stdlib.h>\n"], 0
    while index < len(tokens):
        output.append(before.get(index, ""))
        if index in replaced:
            last, text = replaced[index]
            output.append(text)
            output.append(after.get(last, ""))
            index = last + 1
            continue
        output.append(tokens[index].text)
        output.append(after.get(index, ""))
        index += 1
    return "".join(output)


def main():
    if len(sys.argv) != 3:
        raise SystemExit("usage: flm_translate.py IN.flm OUT.c")
    source_path, output_path = sys.argv[1], sys.argv[2]
    with open(source_path) as source:
        text = source.read()
    try:
        translated = translate(text)
    except TranslateError as error:
        raise SystemExit(f"{source_path}: {error}")
    with open(output_path, "w") as output:
        output.write(f"/* generated by build/flm_translate.py from {source_path} */\n")
        output.write(translated)


if __name__ == "__main__":
    main()
