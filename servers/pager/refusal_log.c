/* refusal_log.c: the pager's lines about refused requests go through
 * log_limit (formica/log_limit.h): at most 64 a second per client, so a
 * program that floods the pager with bad PAGER_INITs cannot flood the
 * console; the lines held back are counted in the next one. */
#include "pager.h"
#include <formica/log_limit.h>
#include <formica/user.h>
#include <stdio.h>

static struct log_limit refusals;

bool refusal_may_print(uint32_t pid)
{
    uint64_t held_back = 0;
    if (!log_limit_allow(&refusals, pid, clock_microseconds(), &held_back))
        return false;
    if (held_back > 0)
        printf("pager: (%lu more refusals for pid %u not shown)\n", held_back, pid);
    return true;
}
