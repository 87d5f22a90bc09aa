/* report.c: fstest's @json result lines and its file pattern:
 * byte i of a file written with seed s is (i * 131 + i / 4096 + s) mod 251. */
#include "report.h"
#include <formica/json.h>
#include <stdio.h>

static int failed_cases;

void report(const char *name, bool ok, long result)
{
    printf("@json {\"kind\":\"fstest\",\"case\":");
    json_print_string(name);
    printf(",\"ok\":%s,\"result\":%ld}\n", ok ? "true" : "false", result);
    if (!ok)
        failed_cases++;
}

int failures(void)
{
    return failed_cases;
}

uint8_t pattern_byte(uint32_t seed, uint64_t offset)
{
    return (uint8_t)((offset * 131 + offset / 4096 + seed) % 251);
}

void fill_pattern(uint8_t *buffer, uint32_t seed, uint64_t offset, uint64_t length)
{
    for (uint64_t i = 0; i < length; i++)
        buffer[i] = pattern_byte(seed, offset + i);
}

bool matches_pattern(const uint8_t *buffer, uint32_t seed, uint64_t offset, uint64_t length)
{
    for (uint64_t i = 0; i < length; i++)
        if (buffer[i] != pattern_byte(seed, offset + i))
            return false;
    return true;
}
