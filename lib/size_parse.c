/* size_parse.c: reads a size with an optional K/M/G suffix ("64K", "1M", "0x1000")
 * for every program's command line. Plain C on strtoul, so the static Linux Bonnie of
 * the evaluation (build/linux/) compiles the same file. */
#include <formica/size.h>
#include <stdlib.h>

bool size_parse(const char *text, uint64_t *value)
{
    if (*text < '0' || *text > '9')
        return false; /* no sign, no space: strtoul would take "-1" as a huge size */
    char *end;
    uint64_t number = strtoul(text, &end, 0);
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift != 0)
        end++;
    if (*end != '\0' || number > (UINT64_MAX >> shift))
        return false;
    *value = number << shift;
    return true;
}
