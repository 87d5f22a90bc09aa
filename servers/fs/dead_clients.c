/* dead_clients.c: FS learns which clients have ended from the process list
 * (pids are never reused, so a pid missing from it, or a zombie, is gone for
 * good) and closes their handles, freeing files unlinked while they held
 * them open. Looked at every DEAD_CLIENTS_PERIOD_US from the request loop
 * while handles are open, at once when handles run short, and before a sync. */
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/user.h>
#include <stdio.h>

/* Above the kernel's process slots: a list this full may not show every process. */
#define LIST_CAPACITY 512u

static struct process_info list[LIST_CAPACITY];
static uint32_t alive[LIST_CAPACITY];

static void sort_pids(uint32_t *pids, uint32_t count)
{
    for (uint32_t i = 1; i < count; i++) {
        uint32_t pid = pids[i], j = i;
        for (; j > 0 && pids[j - 1] > pid; j--)
            pids[j] = pids[j - 1];
        pids[j] = pid;
    }
}

/* The pids of live processes, sorted; -1 when the list cannot be had whole. */
static long live_pids(void)
{
    long count = process_list(list, LIST_CAPACITY);
    if (count < 0 || (uint64_t)count >= LIST_CAPACITY) {
        printf("fs: cannot list the processes (%s); handles kept\n",
               count < 0 ? error_text(count) : "list full");
        return -1;
    }
    uint32_t live = 0;
    for (long i = 0; i < count; i++)
        if (list[i].state != PROCESS_ZOMBIE && list[i].state != PROCESS_FREE)
            alive[live++] = list[i].pid;
    sort_pids(alive, live);
    return live;
}

void fs_close_dead_clients(struct fs_server *server)
{
    server->dead_clients_check_us = clock_microseconds();
    if (server->open_files->in_use == 0)
        return;
    fs_times_flush(server); /* before any of their inodes is freed */
    long live = live_pids();
    if (live < 0)
        return;
    if (server->kept != NULL)
        kept_answers_forget_dead(&server->kept->fs.answers, alive, (uint32_t)live);
    uint32_t closed = open_files_close_dead(server->open_files, alive, (uint32_t)live,
                                            fs_release_unlinked, server);
    if (closed > 0)
        printf("fs: closed %u handles of ended processes\n", closed);
}
