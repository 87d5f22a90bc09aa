/* device_process.c: looks up a process's device rights. Records are kept by
 * slot and carry the pid, so a record left by an earlier process in the same
 * slot never grants anything to a new one. */
#include "device_state.h"
#include "shared.h"

struct device_process *device_process_of(const struct process *process)
{
    if (kernel_shared->devices == NULL || process == NULL)
        return NULL;
    struct device_process *record =
        &kernel_shared->devices->processes[process->pid % PROCESS_SLOTS];
    return record->pid == process->pid ? record : NULL;
}

bool device_is_driver(const struct process *process)
{
    const struct device_process *record = device_process_of(process);
    return record != NULL && (record->flags & SPAWN_DRIVER) != 0;
}
