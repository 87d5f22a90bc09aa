/* stdio.c: line-buffered console output on top of the shared format engine
 * (format.c), and a console line reader with echo and backspace for raw
 * serial input. */
#include <format.h>
#include <formica/user.h>
#include <stdio.h>

#define OUTPUT_BUFFER_BYTES 1024
#define BACKSPACE 0x08
#define DELETE 0x7f
#define ESCAPE 0x1b

static char output_buffer[OUTPUT_BUFFER_BYTES];
static size_t output_used;

void fflush_console(void)
{
    size_t written = 0;
    while (written < output_used) {
        long result = console_write(output_buffer + written, output_used - written);
        if (result <= 0)
            break;
        written += (size_t)result;
    }
    output_used = 0;
}

static void output_character(char character)
{
    output_buffer[output_used++] = character;
    if (character == '\n' || output_used == OUTPUT_BUFFER_BYTES)
        fflush_console();
}

static void output_sink(void *context, char character)
{
    (void)context;
    output_character(character);
}

int vprintf(const char *format, va_list arguments)
{
    return format_to(output_sink, NULL, format, arguments);
}

int printf(const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    int produced = vprintf(format, arguments);
    va_end(arguments);
    return produced;
}

int vsnprintf(char *buffer, size_t size, const char *format, va_list arguments)
{
    return format_string_va(buffer, size, format, arguments);
}

int snprintf(char *buffer, size_t size, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    int produced = format_string_va(buffer, size, format, arguments);
    va_end(arguments);
    return produced;
}

int putchar(int character)
{
    output_character((char)character);
    return (unsigned char)character;
}

int puts(const char *text)
{
    int count = 0;
    for (; text[count] != '\0'; count++)
        output_character(text[count]);
    output_character('\n');
    return count + 1;
}

int getchar(void)
{
    unsigned char character;
    fflush_console();
    if (console_read(&character, 1) != 1)
        return EOF;
    return character;
}

static void erase_last_character(size_t *length)
{
    if (*length == 0)
        return;
    (*length)--;
    printf("\b \b");
    fflush_console();
}

/* After ESC: '[' starts a control sequence (an arrow or editing key of a
 * terminal or of the keyboards, lib/keyboard_map.c) that ends at its final
 * byte, 0x40-0x7e; line editing has no use for them, so they are dropped
 * whole rather than typed as "[A". */
static void skip_escape_sequence(void)
{
    if (getchar() != '[')
        return;
    for (int bytes = 0; bytes < 16; bytes++) {
        int character = getchar();
        if (character == EOF || (character >= 0x40 && character <= 0x7e))
            return;
    }
}

int read_line(char *buffer, size_t size)
{
    size_t length = 0;
    for (;;) {
        int character = getchar();
        if (character == EOF)
            return EOF;
        if (character == '\r' || character == '\n')
            break;
        if (character == BACKSPACE || character == DELETE) {
            erase_last_character(&length);
            continue;
        }
        if (character == ESCAPE) {
            skip_escape_sequence();
            continue;
        }
        if (character < ' ' || character > '~' || length + 1 >= size)
            continue; /* ignore other control bytes, bytes past ASCII and past the end */
        buffer[length++] = (char)character;
        putchar(character);
        fflush_console();
    }
    putchar('\n');
    if (size > 0)
        buffer[length] = '\0';
    return (int)length;
}
