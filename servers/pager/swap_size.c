/* swap_size.c: pager_swap_mib=N checked (swap_size.h). */
#include "swap_size.h"
#include <formica/errors.h>

long swap_size_parse(const char *text, uint32_t *mib)
{
    uint64_t number = 0;
    const char *digit = text;
    for (; *digit >= '0' && *digit <= '9'; digit++) {
        number = number * 10 + (uint64_t)(*digit - '0');
        if (number > SWAP_MOST_MIB)
            number = SWAP_MOST_MIB + 1; /* past the bound: no overflow however long */
    }
    if (digit == text || *digit != '\0' || number == 0)
        return -E_INVALID;
    if (number > SWAP_MOST_MIB)
        return -E_TOO_BIG;
    *mib = (uint32_t)number;
    return 0;
}
