/* json.h: helpers for the one-line "@json {...}" results that programs print
 * for machines. They write through printf (stdio.h), so a result line stays
 * one console write as long as it ends with a newline. */
#pragma once

/* Prints `text` with JSON escapes, without the surrounding quotes. */
void json_print_string_content(const char *text);
/* Prints `text` as a quoted JSON string. */
void json_print_string(const char *text);
