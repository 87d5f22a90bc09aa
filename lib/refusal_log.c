/* refusal_log.c: the rate-limited refusal line of formica/refusal_log.h, one
 * limit per server process (each server is one process), kept per account. */
#include <formica/log_limit.h>
#include <formica/refusal_log.h>
#include <formica/user.h>
#include <stdarg.h>
#include <stdio.h>

void refusal_log(const char *server, uint32_t account, const char *format, ...)
{
    static struct log_limit limit;
    uint64_t held_back = 0;
    if (!log_limit_allow(&limit, account, clock_microseconds(), &held_back))
        return;
    if (held_back > 0)
        printf("%s: %lu more refusals of account %u not shown\n", server, held_back, account);
    va_list arguments;
    va_start(arguments, format);
    vprintf(format, arguments);
    va_end(arguments);
}
