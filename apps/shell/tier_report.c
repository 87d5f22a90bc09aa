/* tier_report.c: the shell's `tier` commands for BLK's NVM tier
 * (docs/storage.md, "The NVM tier"): `tier` prints its state and counters
 * and one @json {"kind":"tier",...} line; `tier flush` writes every dirty
 * line back (after FS's sync), `tier detach` does so and detaches it,
 * `tier format` drops every line (a refused tier's too). */
#include "shell.h"
#include <formica/blk_tier.h>
#include <formica/file.h>
#include <formica/protocol/blk.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

static const char *const state_names[] = {
    [BLK_TIER_NONE] = "none",           [BLK_TIER_ATTACHED] = "attached",
    [BLK_TIER_REFUSED] = "refused",     [BLK_TIER_DETACHED] = "detached",
    [BLK_TIER_TOO_SMALL] = "too-small",
};

static const char *state_name(uint32_t state)
{
    return state <= BLK_TIER_TOO_SMALL ? state_names[state] : "unknown";
}

static void print_report(const struct blk_tier_report *report)
{
    uint64_t average =
        report->writeback_runs ? report->writeback_bytes / report->writeback_runs : 0;
    printf("tier: %s", state_name(report->state));
    if (report->refusal[0] != '\0')
        printf(" (%s)", report->refusal);
    printf("; %lu MiB NVM in front of a disk of %lu MiB, %lu sets of %lu lines, %s\n",
           report->nvm_bytes >> 20, report->disk_bytes >> 20, report->sets, report->ways,
           report->write_through ? "write-through" : "write-back");
    printf(
        "tier: %lu hits, %lu misses, %lu read ahead, %lu bypasses; %lu of %lu lines cached, %lu "
        "dirty; %lu passes, %lu runs written back (%lu KiB, %lu KiB a run), %lu failed passes; %lu "
        "lines taken back from mappings\n",
        report->hits, report->misses, report->read_ahead, report->bypasses, report->cached_lines,
        report->lines, report->dirty_lines, report->passes, report->writeback_runs,
        report->writeback_bytes >> 10, average >> 10, report->pass_failures,
        report->mapped_evictions);
    printf("@json {\"kind\":\"tier\",\"state\":\"%s\",\"hits\":%lu,\"misses\":%lu,"
           "\"dirty_lines\":%lu,\"writeback_runs\":%lu,\"writeback_bytes\":%lu,\"bypasses\":%lu,"
           "\"read_ahead\":%lu,\"cached_lines\":%lu,\"lines\":%lu,\"sets\":%lu,\"passes\":%lu,"
           "\"pass_failures\":%lu,\"average_run_bytes\":%lu,\"nvm_bytes\":%lu,"
           "\"direct_lends\":%lu,\"lend_copies\":%lu,\"write_through\":%s,\"disk_bytes\":%lu,"
           "\"mapped_evictions\":%lu}\n",
           state_name(report->state), report->hits, report->misses, report->dirty_lines,
           report->writeback_runs, report->writeback_bytes, report->bypasses, report->read_ahead,
           report->cached_lines, report->lines, report->sets, report->passes, report->pass_failures,
           average, report->nvm_bytes, report->direct_lends, report->lend_copies,
           report->write_through ? "true" : "false", report->disk_bytes, report->mapped_evictions);
}

/* BLK_TIER_REPORT, or BLK_TIER_CONTROL with `action` (0: the report). */
static long ask_blk(long blk, uint64_t control, uint32_t action)
{
    if (action == 0)
        return request_operation(blk, control, BLK_TIER_REPORT);
    request_prepare(control, BLK_TIER_CONTROL);
    *blk_tier_control_of(ica_control_of(control)) = (struct blk_tier_control_message){action, 0};
    return request_call(blk, control);
}

static uint32_t action_named(const char *word)
{
    if (word == NULL)
        return 0;
    if (strcmp(word, "flush") == 0)
        return BLK_TIER_FLUSH;
    if (strcmp(word, "detach") == 0)
        return BLK_TIER_DETACH;
    return strcmp(word, "format") == 0 ? BLK_TIER_FORMAT : UINT32_MAX;
}

static const char *const done_text[] = {
    [BLK_TIER_FLUSH] = "every dirty line written back",
    [BLK_TIER_DETACH] = "written back and detached: BLK caches in DRAM, the disk is self-contained",
    [BLK_TIER_FORMAT] = "formatted: every line dropped",
};

bool command_tier(int word_count, char **words)
{
    uint32_t action = action_named(word_count > 1 ? words[1] : NULL);
    if (action == UINT32_MAX) {
        printf("tier: usage: tier [flush|detach|format]\n");
        return false;
    }
    if (action == BLK_TIER_FLUSH || action == BLK_TIER_DETACH) {
        long synced = sync(); /* FS's writes in BLK first, so the disk gets all of them */
        if (synced != 0)
            printf("tier: sync: %s (writing back what BLK holds)\n", error_text(synced));
    }
    long blk =
        server_wait_for(SERVER_NAME_BLK, SERVER_START_WAIT_MS); /* BLK may still be mounting */
    long control = blk < 0 ? blk : ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0) {
        printf("tier: no blk: %s\n", error_text(control));
        return false;
    }
    long result = ask_blk(blk, (uint64_t)control, action);
    if (result == 0 && action == 0)
        print_report((const struct blk_tier_report *)ica_control_of((uint64_t)control)->payload);
    else if (result == 0)
        printf("tier: %s\n", done_text[action]);
    else
        printf("tier: %s: %s\n", word_count > 1 ? words[1] : "report",
               result == -E_NOT_FOUND ? "no tier attached" : error_text(result));
    ica_free((uint64_t)control);
    return result == 0;
}
