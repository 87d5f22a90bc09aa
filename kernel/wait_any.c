/* wait_any.c: SYS_WAIT_ANY, waiting for whichever child ends first. init
 * uses it to learn at once that a server it started has died, so it can
 * restart it (apps/init/reincarnation.c). The child's exit wakes its parent
 * (scheduler_exit_current); the parent then collects it like SYS_WAIT. */
#include "cpu.h"
#include "mkernel_client.h"
#include "process.h"
#include "scheduler.h"
#include "shared.h"
#include "user_memory.h"
#include <formica/errors.h>
#include <formica/protocol/syscall_table.h>

/* An ended, uncollected child of `parent`; NULL if none. *any tells whether
 * the parent has any uncollected child at all. */
static struct process *ended_child(uint32_t parent, bool *any)
{
    *any = false;
    for (uint32_t slot = 0; slot < PROCESS_SLOTS; slot++) {
        struct process *process = &kernel_shared->processes[slot];
        if (process->state == PROCESS_FREE || process->parent != parent || process->collected)
            continue;
        *any = true;
        if (process->state == PROCESS_ZOMBIE)
            return process;
    }
    return NULL;
}

static long collect_child(struct process *child, uint64_t code_address)
{
    uint32_t pid = child->pid;
    int32_t code = child->exit_code;
    struct intercore_message message = {.type = MESSAGE_PROCESS_COLLECT, .process_collect = {pid}};
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    if (code_address != 0 && copy_to_user(code_address, &code, 4) != 0)
        return -E_FAULT;
    return pid;
}

long sys_wait_any(uint64_t exit_code)
{
    struct process *me = this_cpu()->current;
    if (exit_code != 0 && !user_range_ok(me->root, exit_code, 4, true))
        return -E_FAULT;
    for (;;) {
        bool any;
        struct process *child = ended_child(me->pid, &any);
        if (child != NULL)
            return collect_child(child, exit_code);
        if (!any)
            return -E_NOT_FOUND;
        scheduler_block(WAIT_CHILD, 0);
        if (me->kill_requested)
            scheduler_exit_current(PROCESS_EXIT_KILLED);
    }
}
