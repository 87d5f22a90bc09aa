/* flmalloc_policy.c: libflmalloc's policy (seed 000 §5.1), pure so the host
 * tests it: requests under 10 MiB stay local; larger ones too while the local
 * total stays within the limit; the rest go to a mapped file. */
#include "flmalloc_policy.h"

#define HEADER_CHECK 0x666c6d616c6c6f63ull /* "flmalloc" */

uint64_t flmalloc_limit_of(uint64_t available, uint32_t percent)
{
    return available / 100 * percent + available % 100 * percent / 100;
}

void flmalloc_budget_init(struct flmalloc_budget *budget, uint64_t limit)
{
    *budget = (struct flmalloc_budget){.limit = limit};
}

static bool fits_local(const struct flmalloc_budget *budget, uint64_t bytes)
{
    return budget->local <= budget->limit && bytes <= budget->limit - budget->local;
}

enum flmalloc_place flmalloc_choose(const struct flmalloc_budget *budget, uint64_t bytes)
{
    if (bytes > UINT64_MAX - FLMALLOC_PAGE_BYTES)
        return FLMALLOC_REFUSED; /* neither a header nor page rounding fits */
    if (bytes < FLMALLOC_ALWAYS_LOCAL || fits_local(budget, bytes))
        return FLMALLOC_LOCAL;
    return FLMALLOC_FAR;
}

void flmalloc_took_local(struct flmalloc_budget *budget, uint64_t bytes)
{
    budget->local += bytes;
    if (budget->local > budget->local_peak)
        budget->local_peak = budget->local;
}

void flmalloc_gave_local(struct flmalloc_budget *budget, uint64_t bytes)
{
    budget->local -= bytes < budget->local ? bytes : budget->local;
}

bool flmalloc_array_bytes(uint64_t count, uint64_t size, uint64_t *bytes)
{
    if (size != 0 && count > UINT64_MAX / size)
        return false;
    *bytes = count * size;
    return true;
}

uint64_t flmalloc_far_length(uint64_t bytes)
{
    uint64_t at_least_one = bytes == 0 ? 1 : bytes;
    return (at_least_one + FLMALLOC_PAGE_BYTES - 1) / FLMALLOC_PAGE_BYTES * FLMALLOC_PAGE_BYTES;
}

uint64_t flmalloc_header_check(uint64_t bytes)
{
    return bytes ^ HEADER_CHECK;
}
