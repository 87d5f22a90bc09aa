/* framebuffer_console.h: text on a linear framebuffer (the UEFI GOP or VBE
 * mode the loader set), drawn with the build's bitmap font. Text goes into a
 * grid of cells first; a flush draws only the cells that differ from what is
 * on the screen, so a scroll redraws what changed, never reads the screen. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* The text grid's largest size; a larger screen draws the font 2x, 3x, ... */
#define FRAMEBUFFER_MAX_COLUMNS 256
#define FRAMEBUFFER_MAX_ROWS 128
#define FRAMEBUFFER_MAX_CELLS (FRAMEBUFFER_MAX_COLUMNS * FRAMEBUFFER_MAX_ROWS)

/* What the loader says about the screen (multiboot2 tag 8, direct RGB). */
struct framebuffer_format {
    uint64_t physical;
    uint32_t pitch; /* bytes from one pixel row to the next */
    uint32_t width, height;
    uint8_t bits_per_pixel; /* 16, 24 or 32 are drawn */
    uint8_t red_position, red_size;
    uint8_t green_position, green_size;
    uint8_t blue_position, blue_size;
};

/* The colours text is drawn in: ordinary output, and a panic's report. */
enum console_colour { CONSOLE_COLOUR_TEXT, CONSOLE_COLOUR_PANIC, CONSOLE_COLOURS };
/* A cell's colour byte also marks the cursor's cell. */
#define CONSOLE_CELL_CURSOR 0x80

struct console_cell {
    uint8_t character; /* Latin-1 */
    uint8_t colour;    /* enum console_colour, | CONSOLE_CELL_CURSOR */
};

struct framebuffer_console {
    volatile uint8_t *pixels; /* NULL: no framebuffer console */
    struct framebuffer_format format;
    uint32_t bytes_per_pixel;
    uint32_t scale; /* each font pixel is scale x scale screen pixels */
    uint32_t columns, rows;
    uint32_t row, column; /* where the next character goes */
    uint8_t colour;       /* of the next character */
    uint32_t foreground[CONSOLE_COLOURS], background[CONSOLE_COLOURS]; /* packed pixels */
    struct console_cell *cells; /* columns x rows: what the screen should show */
    struct console_cell *shown; /* what it shows */
};

/* True when the format can be drawn (direct RGB, 16/24/32 bits, room for a
 * line of text); `reason` says why not otherwise. */
bool framebuffer_format_usable(const struct framebuffer_format *format, const char **reason);
/* Starts the console on `pixels` (the framebuffer, mapped), with cell
 * arrays of FRAMEBUFFER_MAX_CELLS each, and clears the screen. */
void framebuffer_console_start(struct framebuffer_console *console, volatile uint8_t *pixels,
                               const struct framebuffer_format *format, struct console_cell *cells,
                               struct console_cell *shown);
/* The same screen through another mapping of it (write-combining, later in boot). */
void framebuffer_console_remap(struct framebuffer_console *console, volatile uint8_t *pixels);
/* One character into the grid: '\n', '\r', '\b' and '\t' move the cursor,
 * other control codes are dropped; the last row scrolls. Draws nothing. */
void framebuffer_console_put(struct framebuffer_console *console, char character);
/* Draws every cell that differs from the screen, and the cursor. */
void framebuffer_console_flush(struct framebuffer_console *console);
void framebuffer_console_set_colour(struct framebuffer_console *console,
                                    enum console_colour colour);
