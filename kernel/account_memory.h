/* account_memory.h: what a quota account's memory use is (docs/authority.md,
 * "Accounts and quotas"), read the same way by the m-kernel's checks and by
 * any core that installs a mapping lend (docs/mmap.md, "What an account
 * pays for a mapping"). */
#pragma once
#include <stdint.h>
#include "process.h"

/* The bytes a member of an account counts: what the m-kernel mapped for it
 * (memory_bytes: ICAs, charges, private copies included) and 4 KiB for each
 * mapping lend it holds now. Any core may read it. */
uint64_t account_member_bytes(const struct process *member);
/* The memory the members of `account` count now (account_member_bytes summed). */
uint64_t account_memory_used(uint32_t account);
/* Bytes `process`'s account may still count before its limit (UINT64_MAX:
 * init's account, which has none). */
uint64_t account_memory_left(const struct process *process);
/* Pages of mapping lends `process`'s account has room for now, less the
 * credit its members hold (UINT64_MAX: no limit): what a fault may grant. */
uint64_t account_lend_room(const struct process *process);
/* On the m-kernel, a memory check's sum of `account`: account_memory_used,
 * with every member's mapping-lend credit taken back before its bytes are
 * read, so the room the check finds is spent once (the members' next
 * faults sum the account again). One pass: a member's record counts only
 * its own lends, so its revoke need precede only its own read. */
uint64_t account_memory_used_revoking(uint32_t account);

/* The lends a credit word (process.h: mapping_lend_credit) grants. */
static inline uint32_t account_credit_lends(uint64_t word)
{
    return (uint32_t)word;
}

/* The word that grants `lends` in the generation of `word`. */
static inline uint64_t account_credit_word(uint64_t word, uint32_t lends)
{
    return (word & ~0xffffffffull) | lends;
}
