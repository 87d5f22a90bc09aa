/* stdlib.c: number parsing (strtol, strtoul, atoi) and process exit (exit,
 * abort) for user programs. Allocation is in malloc.c. */
#include <formica/user.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static bool is_space(char character)
{
    return character == ' ' || (character >= '\t' && character <= '\r');
}

/* The value of a digit character in bases up to 36, or 36 if it is none. */
static int digit_value(char character)
{
    if (character >= '0' && character <= '9')
        return character - '0';
    if (character >= 'a' && character <= 'z')
        return character - 'a' + 10;
    if (character >= 'A' && character <= 'Z')
        return character - 'A' + 10;
    return 36;
}

/* Skips the "0x" prefix for base 16 and picks the base when it is 0. */
static const char *parse_base_prefix(const char *cursor, int *base)
{
    bool has_hex_prefix =
        cursor[0] == '0' && (cursor[1] == 'x' || cursor[1] == 'X') && digit_value(cursor[2]) < 16;
    if ((*base == 0 || *base == 16) && has_hex_prefix) {
        *base = 16;
        return cursor + 2;
    }
    if (*base == 0)
        *base = cursor[0] == '0' ? 8 : 10;
    return cursor;
}

/* Parses the magnitude; sets *overflow when it does not fit in 64 bits. */
static unsigned long parse_magnitude(const char *text, char **end, int base, bool *negative,
                                     bool *overflow)
{
    const char *cursor = text;
    *negative = false;
    *overflow = false;
    while (is_space(*cursor))
        cursor++;
    if (*cursor == '+' || *cursor == '-')
        *negative = *cursor++ == '-';
    cursor = parse_base_prefix(cursor, &base);
    const char *digits_start = cursor;
    unsigned long value = 0;
    for (; base >= 2 && base <= 36 && digit_value(*cursor) < base; cursor++) {
        unsigned long digit = (unsigned long)digit_value(*cursor);
        if (value > (ULONG_MAX - digit) / (unsigned long)base)
            *overflow = true;
        value = value * (unsigned long)base + digit;
    }
    if (end != NULL)
        *end = (char *)(cursor == digits_start ? text : cursor);
    return value;
}

unsigned long strtoul(const char *text, char **end, int base)
{
    bool negative, overflow;
    unsigned long value = parse_magnitude(text, end, base, &negative, &overflow);
    if (overflow)
        return ULONG_MAX;
    return negative ? 0ul - value : value;
}

long strtol(const char *text, char **end, int base)
{
    bool negative, overflow;
    unsigned long value = parse_magnitude(text, end, base, &negative, &overflow);
    if (negative)
        return overflow || value > (unsigned long)LONG_MAX + 1 ? LONG_MIN : (long)(0ul - value);
    return overflow || value > LONG_MAX ? LONG_MAX : (long)value;
}

int atoi(const char *text)
{
    return (int)strtol(text, NULL, 10);
}

void exit(int code)
{
    fflush_console();
    syscall6(SYS_EXIT, code, 0, 0, 0, 0, 0);
    for (;;)
        ; /* not reached: the process is gone */
}

void abort(void)
{
    printf("abort() in process %ld\n", process_id());
    exit(134);
}
