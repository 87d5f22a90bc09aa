/* account_memory.c: a quota account's memory use, summed over its members
 * from the process table every core sees. memory_bytes is written by the
 * m-kernel only and mapping_lends by the member's own core (or the m-kernel
 * once it has ended); each is read whole, so a reader on another core sees
 * either value of a change in progress, never a torn one. */
#include "account_memory.h"
#include "atomic.h"
#include "layout.h"
#include "shared.h"

uint64_t account_member_bytes(const struct process *member)
{
    uint64_t mapped = __atomic_load_n(&member->memory_bytes, __ATOMIC_RELAXED);
    uint64_t lends = atomic_load_acquire(&member->mapping_lends);
    return mapped + lends * PAGE_SIZE;
}

uint64_t account_memory_used(uint32_t account)
{
    uint64_t used = 0;
    for (uint32_t slot = 0; slot < PROCESS_SLOTS; slot++) {
        if (atomic_load_acquire(&kernel_shared->slot_accounts[slot]) != account)
            continue; /* one word a slot: the records of other accounts stay unread */
        const struct process *member = &kernel_shared->processes[slot];
        if (member->state != PROCESS_FREE && member->account == account)
            used += account_member_bytes(member);
    }
    return used;
}

uint64_t account_memory_left(const struct process *process)
{
    if (process->memory_limit == UINT64_MAX)
        return UINT64_MAX; /* init's account: the whole machine */
    uint64_t used = account_memory_used(process->account);
    return used < process->memory_limit ? process->memory_limit - used : 0;
}
