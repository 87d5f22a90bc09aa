/* framebuffer_console.c: the text grid on a linear framebuffer
 * (framebuffer_console.h). The callers hold the console lock; nothing here
 * allocates, so it works from the first line of boot and in a panic. */
#include "framebuffer_console.h"
#include <formica/console_font.h>
#include <string.h>

#define TAB_STOP 8
#define CURSOR_ROWS 2 /* the cursor underlines the last font rows of its cell */

struct rgb {
    uint8_t red, green, blue;
};

/* Light grey on black, as the VGA text screen; a panic in white on red. */
static const struct rgb foreground_rgb[CONSOLE_COLOURS] = {{0xaa, 0xaa, 0xaa}, {0xff, 0xff, 0xff}};
static const struct rgb background_rgb[CONSOLE_COLOURS] = {{0x00, 0x00, 0x00}, {0xaa, 0x00, 0x00}};

bool framebuffer_format_usable(const struct framebuffer_format *format, const char **reason)
{
    uint32_t bits = format->bits_per_pixel;
    if (bits != 16 && bits != 24 && bits != 32)
        *reason = "only 16, 24 and 32 bits per pixel are drawn";
    else if (format->red_size == 0 || format->green_size == 0 || format->blue_size == 0)
        *reason = "not a direct RGB format";
    else if (format->width < CONSOLE_FONT_WIDTH || format->height < CONSOLE_FONT_HEIGHT)
        *reason = "smaller than one character";
    else if ((uint64_t)format->pitch < (uint64_t)format->width * (bits / 8))
        *reason = "pitch shorter than a row of pixels";
    else
        return true;
    return false;
}

static uint32_t channel(uint8_t value, uint8_t position, uint8_t size)
{
    uint32_t bits = size >= 8 ? value : (uint32_t)value >> (8 - size);
    return bits << position;
}

static uint32_t pack(const struct framebuffer_format *format, struct rgb colour)
{
    return channel(colour.red, format->red_position, format->red_size) |
           channel(colour.green, format->green_position, format->green_size) |
           channel(colour.blue, format->blue_position, format->blue_size);
}

/* The smallest whole scale at which the grid fits its largest size. */
static uint32_t scale_for(const struct framebuffer_format *format)
{
    uint32_t scale = 1;
    while (format->width / (CONSOLE_FONT_WIDTH * scale) > FRAMEBUFFER_MAX_COLUMNS ||
           format->height / (CONSOLE_FONT_HEIGHT * scale) > FRAMEBUFFER_MAX_ROWS)
        scale++;
    return scale;
}

static struct console_cell *cell_at(struct console_cell *cells, const struct framebuffer_console *c,
                                    uint32_t row, uint32_t column)
{
    return &cells[row * c->columns + column];
}

static void store_pixel(volatile uint8_t *at, uint32_t bytes, uint32_t value)
{
    if (bytes == 4) {
        *(volatile uint32_t *)at = value;
    } else if (bytes == 2) {
        *(volatile uint16_t *)at = (uint16_t)value;
    } else {
        at[0] = (uint8_t)value;
        at[1] = (uint8_t)(value >> 8);
        at[2] = (uint8_t)(value >> 16);
    }
}

/* One screen row of one font row of a cell: `bits` from the glyph, scaled. */
static void draw_font_row(const struct framebuffer_console *console, volatile uint8_t *line,
                          uint32_t bits, uint32_t foreground, uint32_t background)
{
    uint32_t bytes = console->bytes_per_pixel;
    for (uint32_t x = 0; x < CONSOLE_FONT_WIDTH; x++) {
        uint32_t lit = (bits >> (CONSOLE_FONT_WIDTH - 1 - x)) & 1;
        for (uint32_t repeat = 0; repeat < console->scale; repeat++, line += bytes)
            store_pixel(line, bytes, lit ? foreground : background);
    }
}

static uint32_t glyph_row_bits(uint8_t character, uint32_t row)
{
    const uint8_t *bytes = &console_font_glyphs[character][row * CONSOLE_FONT_ROW_BYTES];
    uint32_t bits = 0;
    for (uint32_t i = 0; i < CONSOLE_FONT_ROW_BYTES; i++)
        bits = bits << 8 | bytes[i];
    return bits >> (CONSOLE_FONT_ROW_BYTES * 8 - CONSOLE_FONT_WIDTH);
}

static void draw_cell(const struct framebuffer_console *console, uint32_t row, uint32_t column,
                      struct console_cell cell)
{
    uint32_t colour = cell.colour & ~CONSOLE_CELL_CURSOR;
    uint32_t foreground = console->foreground[colour], background = console->background[colour];
    uint64_t cell_width = (uint64_t)CONSOLE_FONT_WIDTH * console->scale;
    uint64_t cell_height = (uint64_t)CONSOLE_FONT_HEIGHT * console->scale;
    volatile uint8_t *origin = console->pixels + row * cell_height * console->format.pitch +
                               column * cell_width * console->bytes_per_pixel;
    for (uint32_t y = 0; y < CONSOLE_FONT_HEIGHT; y++) {
        uint32_t bits = glyph_row_bits(cell.character, y);
        if ((cell.colour & CONSOLE_CELL_CURSOR) && y >= CONSOLE_FONT_HEIGHT - CURSOR_ROWS)
            bits = (1u << CONSOLE_FONT_WIDTH) - 1;
        for (uint32_t repeat = 0; repeat < console->scale; repeat++) {
            uint64_t screen_row = (uint64_t)y * console->scale + repeat;
            draw_font_row(console, origin + screen_row * console->format.pitch, bits, foreground,
                          background);
        }
    }
}

static void clear_screen(const struct framebuffer_console *console)
{
    uint32_t background = console->background[CONSOLE_COLOUR_TEXT];
    for (uint32_t y = 0; y < console->format.height; y++) {
        volatile uint8_t *line = console->pixels + (uint64_t)y * console->format.pitch;
        for (uint32_t x = 0; x < console->format.width; x++, line += console->bytes_per_pixel)
            store_pixel(line, console->bytes_per_pixel, background);
    }
}

static void blank_cells(struct console_cell *cells, uint32_t count, uint8_t colour)
{
    for (uint32_t i = 0; i < count; i++)
        cells[i] = (struct console_cell){' ', colour};
}

void framebuffer_console_start(struct framebuffer_console *console, volatile uint8_t *pixels,
                               const struct framebuffer_format *format, struct console_cell *cells,
                               struct console_cell *shown)
{
    memset(console, 0, sizeof(*console));
    console->format = *format;
    console->bytes_per_pixel = format->bits_per_pixel / 8;
    console->scale = scale_for(format);
    console->columns = format->width / (CONSOLE_FONT_WIDTH * console->scale);
    console->rows = format->height / (CONSOLE_FONT_HEIGHT * console->scale);
    for (int colour = 0; colour < CONSOLE_COLOURS; colour++) {
        console->foreground[colour] = pack(format, foreground_rgb[colour]);
        console->background[colour] = pack(format, background_rgb[colour]);
    }
    console->cells = cells;
    console->shown = shown;
    blank_cells(cells, console->columns * console->rows, CONSOLE_COLOUR_TEXT);
    blank_cells(shown, console->columns * console->rows, CONSOLE_COLOUR_TEXT);
    console->pixels = pixels;
    clear_screen(console);
}

void framebuffer_console_remap(struct framebuffer_console *console, volatile uint8_t *pixels)
{
    if (console->pixels != NULL)
        console->pixels = pixels;
}

void framebuffer_console_set_colour(struct framebuffer_console *console, enum console_colour colour)
{
    console->colour = (uint8_t)colour;
}

/* Every row moves up one; the last becomes blank. */
static void scroll(struct framebuffer_console *console)
{
    uint32_t columns = console->columns;
    memmove(console->cells, console->cells + columns,
            (console->rows - 1) * columns * sizeof(struct console_cell));
    blank_cells(cell_at(console->cells, console, console->rows - 1, 0), columns,
                CONSOLE_COLOUR_TEXT);
    console->row = console->rows - 1;
}

static void next_line(struct framebuffer_console *console)
{
    console->column = 0;
    if (++console->row == console->rows)
        scroll(console);
}

void framebuffer_console_put(struct framebuffer_console *console, char character)
{
    if (console->pixels == NULL)
        return;
    uint8_t code = (uint8_t)character;
    if (code == '\n') {
        next_line(console);
    } else if (code == '\r') {
        console->column = 0;
    } else if (code == '\b') {
        if (console->column > 0)
            console->column--;
    } else if (code == '\t') {
        uint32_t stop = (console->column / TAB_STOP + 1) * TAB_STOP;
        while (console->column < stop && console->column < console->columns)
            framebuffer_console_put(console, ' ');
    } else if (code >= 0x20 && code != 0x7f) {
        if (console->column == console->columns)
            next_line(console); /* wrap only when a character needs the next row */
        *cell_at(console->cells, console, console->row, console->column++) =
            (struct console_cell){code, console->colour};
    }
}

static bool same_cell(struct console_cell a, struct console_cell b)
{
    return a.character == b.character && a.colour == b.colour;
}

void framebuffer_console_flush(struct framebuffer_console *console)
{
    if (console->pixels == NULL)
        return;
    uint32_t cursor_column =
        console->column < console->columns ? console->column : console->columns - 1;
    struct console_cell *cursor = cell_at(console->cells, console, console->row, cursor_column);
    cursor->colour |= CONSOLE_CELL_CURSOR;
    for (uint32_t row = 0; row < console->rows; row++) {
        for (uint32_t column = 0; column < console->columns; column++) {
            struct console_cell wanted = *cell_at(console->cells, console, row, column);
            struct console_cell *shown = cell_at(console->shown, console, row, column);
            if (same_cell(wanted, *shown))
                continue;
            draw_cell(console, row, column, wanted);
            *shown = wanted;
        }
    }
    cursor->colour &= (uint8_t)~CONSOLE_CELL_CURSOR;
}
