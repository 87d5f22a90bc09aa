/* format.c: the one printf engine of Formica (kernels and user programs).
 * format_to walks the format string and emits characters into a sink; the
 * string variants use a bounded buffer sink. */
#include <format.h>
#include <stdbool.h>
#include <stdint.h>

struct field {
    bool left_align;
    bool zero_pad;
    int width;
    int precision;
};

struct counted_sink {
    format_sink sink;
    void *context;
    int produced;
};

static void emit(struct counted_sink *out, char character)
{
    out->sink(out->context, character);
    out->produced++;
}

static void emit_padded(struct counted_sink *out, const char *text, int length,
                        const struct field *field)
{
    int padding = field->width > length ? field->width - length : 0;
    char pad = field->zero_pad && !field->left_align ? '0' : ' ';
    int start = 0;
    if (pad == '0' && length > 0 && text[0] == '-') {
        emit(out, '-');
        start = 1;
    }
    if (!field->left_align)
        while (padding-- > 0)
            emit(out, pad);
    for (int i = start; i < length; i++)
        emit(out, text[i]);
    if (field->left_align)
        while (padding-- > 0)
            emit(out, ' ');
}

static int unsigned_to_text(uint64_t value, unsigned base, bool upper, char *buffer)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char reversed[24];
    int length = 0;
    do {
        reversed[length++] = digits[value % base];
        value /= base;
    } while (value != 0);
    for (int i = 0; i < length; i++)
        buffer[i] = reversed[length - 1 - i];
    return length;
}

static void emit_number(struct counted_sink *out, uint64_t value, bool negative, unsigned base,
                        bool upper, const struct field *field)
{
    char text[26];
    int length = 0;
    if (negative)
        text[length++] = '-';
    length += unsigned_to_text(value, base, upper, text + length);
    emit_padded(out, text, length, field);
}

static const char *parse_field(const char *cursor, struct field *field)
{
    *field = (struct field){.precision = -1};
    for (;; cursor++) {
        if (*cursor == '-')
            field->left_align = true;
        else if (*cursor == '0')
            field->zero_pad = true;
        else
            break;
    }
    while (*cursor >= '0' && *cursor <= '9')
        field->width = field->width * 10 + (*cursor++ - '0');
    if (*cursor == '.') {
        cursor++;
        field->precision = 0;
        while (*cursor >= '0' && *cursor <= '9')
            field->precision = field->precision * 10 + (*cursor++ - '0');
    }
    return cursor;
}

static const char *parse_length(const char *cursor, int *long_count)
{
    *long_count = 0;
    while (*cursor == 'l' || *cursor == 'z') {
        *long_count = *cursor == 'z' ? 2 : *long_count + 1;
        cursor++;
    }
    return cursor;
}

static uint64_t fetch_unsigned(va_list *arguments, int long_count)
{
    if (long_count >= 2)
        return va_arg(*arguments, unsigned long long);
    if (long_count == 1)
        return va_arg(*arguments, unsigned long);
    return va_arg(*arguments, unsigned int);
}

static int64_t fetch_signed(va_list *arguments, int long_count)
{
    if (long_count >= 2)
        return va_arg(*arguments, long long);
    if (long_count == 1)
        return va_arg(*arguments, long);
    return va_arg(*arguments, int);
}

static void emit_conversion(struct counted_sink *out, char conversion, const struct field *field,
                            int long_count, va_list *arguments)
{
    switch (conversion) {
    case 'd':
    case 'i': {
        int64_t value = fetch_signed(arguments, long_count);
        uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
        emit_number(out, magnitude, value < 0, 10, false, field);
        break;
    }
    case 'u':
        emit_number(out, fetch_unsigned(arguments, long_count), false, 10, false, field);
        break;
    case 'x':
    case 'X':
        emit_number(out, fetch_unsigned(arguments, long_count), false, 16, conversion == 'X',
                    field);
        break;
    case 'p': {
        struct field pointer_field = {.zero_pad = true, .width = 16, .precision = -1};
        emit(out, '0');
        emit(out, 'x');
        emit_number(out, (uintptr_t)va_arg(*arguments, void *), false, 16, false, &pointer_field);
        break;
    }
    case 's': {
        const char *text = va_arg(*arguments, const char *);
        if (text == NULL)
            text = "(null)";
        int length = 0;
        while (text[length] != '\0' && (field->precision < 0 || length < field->precision))
            length++;
        emit_padded(out, text, length, field);
        break;
    }
    case 'c': {
        char character = (char)va_arg(*arguments, int);
        emit_padded(out, &character, 1, field);
        break;
    }
    default:
        emit(out, '%');
        emit(out, conversion);
    }
}

int format_to(format_sink sink, void *context, const char *format, va_list arguments)
{
    struct counted_sink out = {sink, context, 0};
    va_list copy;
    va_copy(copy, arguments);
    for (const char *cursor = format; *cursor != '\0'; cursor++) {
        if (*cursor != '%') {
            emit(&out, *cursor);
            continue;
        }
        cursor++;
        if (*cursor == '%') {
            emit(&out, '%');
            continue;
        }
        struct field field;
        int long_count;
        cursor = parse_field(cursor, &field);
        cursor = parse_length(cursor, &long_count);
        if (*cursor == '\0')
            break;
        emit_conversion(&out, *cursor, &field, long_count, &copy);
    }
    va_end(copy);
    return out.produced;
}

struct buffer_sink {
    char *buffer;
    size_t size;
    size_t used;
};

static void buffer_put(void *context, char character)
{
    struct buffer_sink *sink = context;
    if (sink->used + 1 < sink->size)
        sink->buffer[sink->used] = character;
    sink->used++;
}

int format_string_va(char *buffer, size_t size, const char *format, va_list arguments)
{
    struct buffer_sink sink = {buffer, size, 0};
    int produced = format_to(buffer_put, &sink, format, arguments);
    if (size > 0)
        buffer[sink.used < size ? sink.used : size - 1] = '\0';
    return produced;
}

int format_string(char *buffer, size_t size, const char *format, ...)
{
    va_list arguments;
    va_start(arguments, format);
    int produced = format_string_va(buffer, size, format, arguments);
    va_end(arguments);
    return produced;
}
