/* account_memory.c: a quota account's memory use, summed over its members
 * from the process table every core sees. memory_bytes is written by the
 * m-kernel only and mapping_lends by the member's own core (or the m-kernel
 * once it has ended); each is read whole, so a reader on another core sees
 * either value of a change in progress, never a torn one. A fault sums its
 * account only when its credit (a few lends granted from the room the last
 * sum found) is spent, and the m-kernel's check takes each member's credit
 * back before it reads that member, so no room is granted twice. */
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

/* The sum over the members of `account` of what they count, and with
 * `with_credit` of the lends they may still install unchecked. */
static uint64_t account_sum(uint32_t account, bool with_credit)
{
    uint64_t used = 0;
    for (uint32_t slot = 0; slot < PROCESS_SLOTS; slot++) {
        if (atomic_load_acquire(&kernel_shared->slot_accounts[slot]) != account)
            continue; /* one word a slot: the records of other accounts stay unread */
        const struct process *member = &kernel_shared->processes[slot];
        if (member->state == PROCESS_FREE || member->account != account)
            continue;
        used += account_member_bytes(member);
        if (with_credit)
            used +=
                (uint64_t)account_credit_lends(atomic_load_acquire(&member->mapping_lend_credit)) *
                PAGE_SIZE;
    }
    return used;
}

uint64_t account_memory_used(uint32_t account)
{
    return account_sum(account, false);
}

uint64_t account_memory_left(const struct process *process)
{
    if (process->memory_limit == UINT64_MAX)
        return UINT64_MAX; /* init's account: the whole machine */
    uint64_t used = account_memory_used(process->account);
    return used < process->memory_limit ? process->memory_limit - used : 0;
}

uint64_t account_lend_room(const struct process *process)
{
    if (process->memory_limit == UINT64_MAX)
        return UINT64_MAX;
    uint64_t used = account_sum(process->account, true);
    return used < process->memory_limit ? (process->memory_limit - used) / PAGE_SIZE : 0;
}

/* A new generation with no lends granted. */
static void revoke_credit(struct process *member)
{
    uint64_t word = atomic_load_acquire(&member->mapping_lend_credit);
    uint64_t next;
    do
        next = account_credit_word(word + (1ull << 32), 0);
    while (!atomic_compare_swap(&member->mapping_lend_credit, &word, next));
}

uint64_t account_memory_used_revoking(uint32_t account)
{
    uint64_t used = 0;
    for (uint32_t slot = 0; slot < PROCESS_SLOTS; slot++) {
        if (atomic_load_acquire(&kernel_shared->slot_accounts[slot]) != account)
            continue;
        struct process *member = &kernel_shared->processes[slot];
        revoke_credit(member); /* before its bytes are read */
        if (member->state != PROCESS_FREE && member->account == account)
            used += account_member_bytes(member);
    }
    return used;
}
