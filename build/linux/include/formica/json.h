/* build/linux/include/formica/json.h: Formica's JSON string printer for the
 * Linux build of Bonnie. */
#pragma once
void json_print_string(const char *text);
