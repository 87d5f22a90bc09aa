/* apps/shell: Formica's shell. With the kernel option cmd=... (build/run
 * --cmd "A; B") it runs those commands in order and exits 0 if all succeeded,
 * else 1; without it, it reads commands at the prompt "formica> ". */
#include "shell.h"
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define PROMPT "formica> "
#define COMMAND_LIST_BYTES 4096
#define LINE_BYTES 256

static bool any_command_failed;

int shell_status_so_far(void)
{
    return any_command_failed ? 1 : 0;
}

static int hex_digit_value(char character)
{
    if (character >= '0' && character <= '9')
        return character - '0';
    if (character >= 'a' && character <= 'f')
        return character - 'a' + 10;
    if (character >= 'A' && character <= 'F')
        return character - 'A' + 10;
    return -1;
}

/* Decodes %XX escapes in place; a '%' not followed by two hex digits stays. */
static void percent_decode(char *text)
{
    char *to = text;
    for (const char *from = text; *from != '\0'; from++) {
        int high = from[0] == '%' ? hex_digit_value(from[1]) : -1;
        int low = high >= 0 ? hex_digit_value(from[2]) : -1;
        if (low >= 0) {
            *to++ = (char)(high * 16 + low);
            from += 2;
        } else {
            *to++ = *from;
        }
    }
    *to = '\0';
}

static void run_and_record(char *line)
{
    if (!run_command_line(line))
        any_command_failed = true;
}

static bool is_blank(char character)
{
    return character == ' ' || character == '\t';
}

/* Returns `text` without leading blanks, cutting trailing blanks in place. */
static char *trim(char *text)
{
    while (is_blank(*text))
        text++;
    size_t length = strlen(text);
    while (length > 0 && is_blank(text[length - 1]))
        text[--length] = '\0';
    return text;
}

/* Runs the ';'-separated commands of `list` in order, echoing each first. */
static void run_command_list(char *list)
{
    char *next = list;
    while (next != NULL) {
        char *separator = strchr(next, ';');
        if (separator != NULL)
            *separator = '\0';
        char *command = trim(next);
        next = separator != NULL ? separator + 1 : NULL;
        if (*command == '\0')
            continue;
        printf(PROMPT "%s\n", command);
        run_and_record(command);
    }
}

static void run_interactive(void)
{
    char line[LINE_BYTES];
    for (;;) {
        printf(PROMPT);
        if (read_line(line, sizeof line) < 0)
            return;
        run_and_record(line);
    }
}

int main(void)
{
    static char command_list[COMMAND_LIST_BYTES];
    long length = kernel_option("cmd", command_list, sizeof command_list);
    if (length == -E_NOT_FOUND) {
        printf("Formica shell; type help for the commands\n");
        run_interactive();
        return 1;
    }
    if (length < 0) {
        printf("shell: cannot read the cmd option: %s\n", error_text(length));
        return 1;
    }
    percent_decode(command_list);
    run_command_list(command_list);
    return shell_status_so_far();
}
