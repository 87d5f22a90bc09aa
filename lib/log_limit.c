/* log_limit.c: the refusal-line limit of formica/log_limit.h: a window of
 * one second per sender, LOG_LIMIT_PER_SECOND lines in it. */
#include <formica/log_limit.h>

#define WINDOW_US 1000000u

bool log_limit_allow(struct log_limit *limit, uint32_t sender, uint64_t now_us, uint64_t *held_back)
{
    struct log_limit_entry *entry = &limit->entries[sender % LOG_LIMIT_SENDERS];
    if (entry->sender != sender) /* another sender had the entry: start afresh */
        *entry = (struct log_limit_entry){.sender = sender, .window_start = now_us};
    if (now_us - entry->window_start >= WINDOW_US) {
        entry->window_start = now_us;
        entry->printed = 0;
    }
    if (entry->printed >= LOG_LIMIT_PER_SECOND) {
        entry->held_back++;
        return false;
    }
    entry->printed++;
    *held_back = entry->held_back;
    entry->held_back = 0;
    return true;
}
