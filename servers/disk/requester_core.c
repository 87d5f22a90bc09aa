/* requester_core.c: pid -> core, from the process list, kept in a small
 * table replaced round-robin (processes do not move between cores, and pids
 * count upwards, so a remembered pid is not another process's). */
#include "requester_core.h"
#include <formica/user.h>

#define REMEMBERED 16
#define LISTED 256

struct known_process {
    uint32_t pid;
    uint32_t core;
};

static struct known_process known[REMEMBERED];
static unsigned next_replaced;
static struct process_info listed[LISTED];

static long look_up(uint32_t pid)
{
    long count = process_list(listed, LISTED);
    for (long i = 0; i < count; i++)
        if (listed[i].pid == pid)
            return listed[i].core;
    return -1;
}

uint32_t requester_core(uint32_t pid)
{
    for (unsigned i = 0; i < REMEMBERED; i++)
        if (known[i].pid == pid && pid != 0)
            return known[i].core;
    long core = look_up(pid);
    if (core < 0)
        return (uint32_t)core_id();
    known[next_replaced] = (struct known_process){.pid = pid, .core = (uint32_t)core};
    next_replaced = (next_replaced + 1) % REMEMBERED;
    return (uint32_t)core;
}
