/* log_limit.h: at most LOG_LIMIT_PER_SECOND refusal lines a second about
 * one sender, so a program that floods a server or the kernel with bad
 * requests cannot flood the console (and slow the core that prints). Lines
 * held back are counted and reported with the next line allowed. Pure C:
 * the kernel, the servers' library and the host tests share it. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define LOG_LIMIT_PER_SECOND 64u
#define LOG_LIMIT_SENDERS 16u /* senders tracked at once (by pid modulo) */

struct log_limit_entry {
    uint32_t sender;
    uint32_t printed;      /* lines printed in the current second */
    uint64_t window_start; /* microseconds */
    uint64_t held_back;    /* lines not printed since the last one that was */
};

struct log_limit {
    struct log_limit_entry entries[LOG_LIMIT_SENDERS];
};

/* Whether a line about `sender` may be printed at `now_us`; when it may,
 * *held_back is how many lines about it were not printed before it. */
bool log_limit_allow(struct log_limit *limit, uint32_t sender, uint64_t now_us,
                     uint64_t *held_back);
