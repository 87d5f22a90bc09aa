/* server_cycles.c: the storage servers' CPU cycles (FS, BLK, DK, from the
 * process list) read just before and after Bonnie's timed part, so the
 * result line says what the servers spent on exactly those references. A
 * server with several instances (BLK's shards) counts them all. */
#include "bonnie.h"
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define LIST_CAPACITY 64

static const char *const server_names[BONNIE_SERVERS] = {SERVER_NAME_FS, SERVER_NAME_BLK,
                                                         SERVER_NAME_DK};

static int server_index(const char *name)
{
    for (int i = 0; i < BONNIE_SERVERS; i++)
        if (strcmp(name, server_names[i]) == 0)
            return i;
    return -1;
}

void bonnie_server_cycles(struct bonnie_server_cycles *snapshot)
{
    static struct process_info list[LIST_CAPACITY];
    memset(snapshot, 0, sizeof *snapshot);
    long count = process_list(list, LIST_CAPACITY);
    for (long i = 0; i < count; i++) {
        int index = server_index(list[i].name);
        if (index >= 0 && list[i].state != PROCESS_ZOMBIE) {
            snapshot->cycles[index] += list[i].cpu_cycles;
            snapshot->pids[index] += list[i].pid;
            snapshot->found[index] = true;
        }
    }
}

void bonnie_print_server_cycles(const struct bonnie_server_cycles *before,
                                const struct bonnie_server_cycles *after)
{
    bool any = false;
    for (int i = 0; i < BONNIE_SERVERS; i++) {
        if (!before->found[i] || !after->found[i])
            continue;
        /* An instance restarted meanwhile (the pids differ): only the new
         * incarnations' cycles are known. */
        bool same = before->pids[i] == after->pids[i];
        printf("%s\"%s\":%lu", any ? "," : ",\"server_cycles\":{", server_names[i],
               same ? after->cycles[i] - before->cycles[i] : after->cycles[i]);
        any = true;
    }
    if (any)
        printf("}");
}
