# screen.py: what a screenshot (build/run --screenshot, QEMU's PNG screendump) shows of the
# framebuffer console. The PNG is decoded with the standard library; each character cell is
# read back by comparing its pixels with the glyphs of the font the kernel was built with
# (build/console_font.py), and a line of expected text is rendered on the host with that font
# and compared pixel for pixel with the cells of a row.
import struct
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "build"))

import console_font  # noqa: E402

# kernel/framebuffer_console.c's colours (foreground, background): ordinary text is light grey
# on black, a panic's report white on red.
TEXT = ((0xAA, 0xAA, 0xAA), (0x00, 0x00, 0x00))
PANIC = ((0xFF, 0xFF, 0xFF), (0xAA, 0x00, 0x00))
PALETTES = (TEXT, PANIC)
CURSOR_ROWS = 2  # the cursor underlines the last font rows of its cell
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class ScreenError(Exception):
    """A file that is not an 8-bit RGB or RGBA PNG."""


def _paeth(left, up, up_left):
    estimate = left + up - up_left
    distances = (abs(estimate - left), abs(estimate - up), abs(estimate - up_left))
    return (left, up, up_left)[distances.index(min(distances))]


def _unfilter(data, width, height, pixel_bytes):
    stride = width * pixel_bytes
    rows, previous, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = data[at], bytearray(data[at + 1:at + 1 + stride])
        at += 1 + stride
        for i in range(stride):
            left = line[i - pixel_bytes] if i >= pixel_bytes else 0
            up_left = previous[i - pixel_bytes] if i >= pixel_bytes else 0
            predictor = (0, left, previous[i], (left + previous[i]) // 2,
                         _paeth(left, previous[i], up_left))[kind] if kind else 0
            line[i] = (line[i] + predictor) & 0xFF
        rows.append(bytes(line))
        previous = line
    return rows


def read_png(path):
    """(width, height, rows of RGB bytes) of an 8-bit RGB or RGBA PNG without interlace."""
    data = Path(path).read_bytes()
    if data[:8] != PNG_SIGNATURE:
        raise ScreenError(f"{path} is not a PNG")
    at, header, compressed = 8, None, b""
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            compressed += body
        at += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ScreenError(f"{path}: only 8-bit RGB or RGBA PNGs without interlace are read")
    pixel_bytes = 3 if colour == 2 else 4
    rows = _unfilter(zlib.decompress(compressed), width, height, pixel_bytes)
    if pixel_bytes == 4:
        rows = [bytes(b for i, b in enumerate(row) if i % 4 != 3) for row in rows]
    return width, height, rows


class Screen:
    """The screen of a screenshot as text cells of the build's font."""

    def __init__(self, path, font=None):
        self.font = font or console_font.load()
        self.width, self.height, self.rows = read_png(path)
        self.columns = self.width // self.font.width
        self.text_rows = self.height // self.font.height
        self._glyphs = {}
        for code in range(0x20, 0x100):
            self._glyphs.setdefault(self._glyph_bits(code, cursor=False), chr(code))
        self.lines = [self._read_row(row) for row in range(self.text_rows)]

    def _glyph_bits(self, code, cursor):
        bits = []
        for y in range(self.font.height):
            lit_row = cursor and y >= self.font.height - CURSOR_ROWS
            bits.append(tuple(lit_row or self.font.pixel(code, x, y)
                              for x in range(self.font.width)))
        return tuple(bits)

    def _cell_pixels(self, row, column):
        start = column * self.font.width * 3
        return [[tuple(self.rows[row * self.font.height + y][start + 3 * x:start + 3 * x + 3])
                 for x in range(self.font.width)] for y in range(self.font.height)]

    def _cell_bits(self, row, column):
        """Which pixels of a cell are lit, in the one palette all its pixels are of; None if
        there is no such palette."""
        pixels = self._cell_pixels(row, column)
        for foreground, background in PALETTES:
            if all(pixel in (foreground, background) for line in pixels for pixel in line):
                return tuple(tuple(pixel == foreground for pixel in line) for line in pixels)
        return None

    def _read_cell(self, row, column):
        bits = self._cell_bits(row, column)
        if bits is None:
            return "\ufffd"
        if bits in self._glyphs:
            return self._glyphs[bits]
        if all(bits[-CURSOR_ROWS:][i] == (True,) * self.font.width for i in range(CURSOR_ROWS)):
            return "_"  # the cursor's cell (what lies under it is not told apart)
        return "\ufffd"

    def _read_row(self, row):
        return "".join(self._read_cell(row, column) for column in range(self.columns)).rstrip()

    def find(self, text, start=0):
        """The first row from `start` whose line begins with `text`, or None."""
        for row in range(start, self.text_rows):
            if self.lines[row].startswith(text):
                return row
        return None

    def row_shows(self, row, text, palette=TEXT):
        """True when the cells of `row` from column 0 are exactly `text` as the host draws it
        with the font in `palette`'s colours: every pixel compared."""
        foreground, background = palette
        if row is None or not 0 <= row < self.text_rows:
            return False
        for y in range(self.font.height):
            line = self.rows[row * self.font.height + y]
            expected = bytearray()
            for character in text:
                for x in range(self.font.width):
                    lit = self.font.pixel(ord(character), x, y)
                    expected += bytes(foreground if lit else background)
            if line[:len(expected)] != bytes(expected):
                return False
        return True

    def text(self):
        return "\n".join(self.lines)
