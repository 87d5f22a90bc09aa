/* progress.c: periodic progress lines for long runs (sort, memseq), with
 * the pager's swap counters when a teramem region exists, so a user of a
 * 10-minute sort on borrowed memory sees it move. */
#include <formica/progress.h>
#include <formica/teramem.h>
#include <formica/user.h>
#include <stdio.h>

void progress_start(struct progress *progress, const char *program, uint64_t interval_us)
{
    struct clock_info clock;
    progress->ticks_per_us =
        clock_get(&clock) == 0 && clock.tsc_hz >= 1000000 ? clock.tsc_hz / 1000000 : 1000;
    progress->program = program;
    progress->interval_ticks =
        (interval_us ? interval_us : PROGRESS_DEFAULT_INTERVAL_US) * progress->ticks_per_us;
    progress->start = progress->last = read_timestamp_counter();
}

void progress_tick(struct progress *progress, const char *phase, uint64_t done, uint64_t total)
{
    uint64_t now = read_timestamp_counter();
    if (now - progress->last < progress->interval_ticks)
        return;
    progress->last = now;
    struct teramem_stats stats = {0};
    if (teramem_base() != 0)
        teramem_stats(&stats);
    uint64_t elapsed_ms = (now - progress->start) / progress->ticks_per_us / 1000;
    printf("%s: %s %lu of %lu, %lu swap-ins, %lu swap-outs, %lu.%lu s\n", progress->program, phase,
           done, total, stats.swap_in_blocks, stats.swap_out_blocks, elapsed_ms / 1000,
           elapsed_ms % 1000 / 100);
    printf("@json {\"kind\":\"progress\",\"program\":\"%s\",\"phase\":\"%s\",\"done\":%lu,"
           "\"total\":%lu,\"swap_in_blocks\":%lu,\"swap_out_blocks\":%lu,\"elapsed_ms\":%lu}\n",
           progress->program, phase, done, total, stats.swap_in_blocks, stats.swap_out_blocks,
           elapsed_ms);
}
