/* command_line.c: looks up "name=value" words in the kernel command line
 * (multiboot command line plus QEMU fw_cfg opt/formica/cmdline), and reads
 * a decimal number from a value. */
#include "shared.h"
#include <string.h>

static bool word_matches(const char *word, const char *name, const char **value)
{
    size_t length = strlen(name);
    if (strncmp(word, name, length) != 0)
        return false;
    if (word[length] == '=') {
        *value = word + length + 1;
        return true;
    }
    if (word[length] == ' ' || word[length] == '\0') {
        *value = word + length;
        return true;
    }
    return false;
}

bool command_line_find(const char *name, const char **value, unsigned *length)
{
    const char *cursor = kernel_shared->command_line;
    while (*cursor != '\0') {
        while (*cursor == ' ')
            cursor++;
        const char *found;
        if (*cursor != '\0' && word_matches(cursor, name, &found)) {
            unsigned count = 0;
            while (found[count] != ' ' && found[count] != '\0')
                count++;
            *value = found;
            *length = count;
            return true;
        }
        while (*cursor != ' ' && *cursor != '\0')
            cursor++;
    }
    return false;
}

bool command_line_option(const char *name, char *value, unsigned value_size)
{
    const char *found;
    unsigned length;
    if (!command_line_find(name, &found, &length))
        return false;
    if (value_size == 0)
        return true;
    if (length > value_size - 1)
        length = value_size - 1;
    memcpy(value, found, length);
    value[length] = '\0';
    return true;
}

uint64_t command_line_parse_number(const char *text, uint64_t fallback)
{
    if (*text < '0' || *text > '9')
        return fallback;
    uint64_t value = 0;
    while (*text >= '0' && *text <= '9')
        value = value * 10 + (uint64_t)(*text++ - '0');
    return value;
}

uint64_t command_line_number(const char *name, uint64_t fallback)
{
    char value[32];
    return command_line_option(name, value, sizeof(value))
               ? command_line_parse_number(value, fallback)
               : fallback;
}
