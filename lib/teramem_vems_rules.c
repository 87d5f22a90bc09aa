/* teramem_vems_rules.c: what a vems region may be (an attached tier, no
 * larger than the device behind it) and its counters from the tier's
 * (formica/teramem_vems.h). Pure code, so the host tests run it. */
#include <formica/errors.h>
#include <formica/teramem_vems.h>
#include <stdio.h>

static const char *state_word(uint32_t state)
{
    switch (state) {
    case BLK_TIER_NONE:
        return "none (boot with build/run --nvm-tier FILE[:SIZE])";
    case BLK_TIER_REFUSED:
        return "refused";
    case BLK_TIER_DETACHED:
        return "detached";
    case BLK_TIER_TOO_SMALL:
        return "too-small";
    default:
        return "unknown";
    }
}

long teramem_vems_check(const struct blk_tier_report *tier, uint64_t bytes, char *why,
                        size_t why_bytes)
{
    if (tier->state != BLK_TIER_ATTACHED) {
        snprintf(why, why_bytes, "the vems backend needs BLK's NVM tier, and the tier is %s",
                 state_word(tier->state));
        return -E_NOT_FOUND;
    }
    if (tier->write_through) {
        snprintf(why, why_bytes,
                 "the vems backend needs a write-back tier: blk_tier=write-through refuses the "
                 "writable mappings of lines a vems region is made of");
        return -E_INVALID;
    }
    if (bytes == 0) {
        snprintf(why, why_bytes, "a vems region of no bytes");
        return -E_INVALID;
    }
    if (bytes > tier->disk_bytes) {
        snprintf(why, why_bytes,
                 "a vems region of %lu KiB is larger than the device behind the tier (%lu KiB)",
                 (unsigned long)(bytes >> 10), (unsigned long)(tier->disk_bytes >> 10));
        return -E_TOO_BIG;
    }
    if (why_bytes > 0)
        why[0] = '\0';
    return 0;
}

void teramem_vems_counters(const struct blk_tier_report *before,
                           const struct blk_tier_report *after, struct teramem_stats *stats)
{
    uint64_t fills = after->fills - before->fills;
    uint64_t written = after->writeback_bytes - before->writeback_bytes;
    *stats = (struct teramem_stats){
        .swap_in_blocks = fills,
        .swap_out_blocks = written / 4096,
        .bytes_in = fills * 4096,
        .bytes_out = written,
    };
}
