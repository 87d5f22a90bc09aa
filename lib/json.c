/* json.c: JSON string escaping for "@json" result lines (quotes, backslashes
 * and control characters; other bytes are passed through as they are). */
#include <formica/json.h>
#include <stdio.h>

void json_print_string_content(const char *text)
{
    for (; *text != '\0'; text++) {
        unsigned char character = (unsigned char)*text;
        if (character == '"' || character == '\\')
            printf("\\%c", character);
        else if (character < ' ')
            printf("\\u%04x", character);
        else
            putchar(character);
    }
}

void json_print_string(const char *text)
{
    putchar('"');
    json_print_string_content(text);
    putchar('"');
}
