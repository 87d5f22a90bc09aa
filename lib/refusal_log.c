/* refusal_log.c: the rate-limited refusal lines of formica/refusal_log.h, one
 * limit per server process (each server is one process), kept per account. */
#include <formica/log_limit.h>
#include <formica/refusal_log.h>
#include <formica/user.h>
#include <stdarg.h>
#include <stdio.h>

bool refusal_may_print(const char *server, uint32_t account)
{
    static struct log_limit limit;
    uint64_t held_back = 0;
    if (!log_limit_allow(&limit, account, clock_microseconds(), &held_back))
        return false;
    if (held_back > 0)
        printf("%s: %lu more refusals of account %u not shown\n", server, held_back, account);
    return true;
}

void refusal_log(const char *server, uint32_t account, const char *format, ...)
{
    if (!refusal_may_print(server, account))
        return;
    va_list arguments;
    va_start(arguments, format);
    vprintf(format, arguments);
    va_end(arguments);
}
