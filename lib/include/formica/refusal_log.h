/* refusal_log.h: a server's log line about one refused request, at most
 * LOG_LIMIT_PER_SECOND lines a second per quota account (formica/log_limit.h),
 * so a flood of bad requests costs the server no more than the requests. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

/* Whether a refusal line of `account` may be printed now (then, first, how
 * many were held back, prefixed with `server`): for a refusal reported in
 * several printf calls. */
bool refusal_may_print(const char *server, uint32_t account);

/* Prints the line `format` says (one whole line, with its "\n") unless
 * `account` (the request's kernel-stamped sender_account) has used its
 * lines this second; the next line printed first says how many were not,
 * prefixed with `server`. */
void refusal_log(const char *server, uint32_t account, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
