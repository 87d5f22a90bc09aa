/* mapping_lend.h: mapping lends (docs/mmap.md): a block ICA lent into a
 * process at an address of a file region for as long as it maps it, not for
 * one request. Each counts in the block's lend_count, so its lender never
 * reuses the block while any process maps it. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "ica.h"
#include "mapping_lend_table.h"
#include "process.h"

/* Software bits of a mapping lend's page-table entry: bit 9 is the
 * m-kernel's "not a frame of the process" (PAGE_DEVICE: never freed with its
 * address space), bit 10 says it is a lend. */
#define ENTRY_NOT_A_FRAME (1ull << 9)
#define ENTRY_MAPPING_LEND (1ull << 10)

/* The table, allocated by the m-kernel at boot (MAPPING_LENDS entries). */
static inline struct mapping_lend *mapping_lend_table(void)
{
    return kernel_shared->mapping_lends;
}

/* On the mapper's core (or the m-kernel for a process that does not run):
 * shows `block` (lent to `process` with the answer it just received) at
 * `address`, which its file region's tables cover, read-only or `writable`.
 * False (nothing changed) when the address is mapped already, has no table,
 * or the table has no room near the block's home. */
bool mapping_lend_install(struct process *process, struct ica *block, uint64_t address,
                          bool writable);
/* The blocks lent to `process` with the answer on its control ICA
 * `control`, each a mapping lend at its page from `address` on (below
 * `end`), read-only or `writable` (only a block its holder lent itself);
 * the answer's own lends end (the mapping lends count apart). Each lend
 * counts 4 KiB in its account (account_memory.h): past the per-process
 * bound or past the account's limit the process's own lends elsewhere end
 * first, and only as many as then fit are installed. 1 when the first one
 * is mapped, 0 when not, -E_QUOTA when its account is full and it held no
 * lend to give back (nothing mapped). */
long mapping_lends_from_answer(struct process *process, uint64_t control, uint64_t address,
                               uint64_t end, bool writable);
/* Ends up to `count` of the process's own lends outside [keep, keep_end)
 * (on its core), giving their 4 KiB back to its account; how many. */
uint32_t mapping_lends_give_back(struct process *process, uint32_t count, uint64_t keep,
                                 uint64_t keep_end);
/* Ends the mapping lend at `address`, if one is mapped there. */
void mapping_lend_end_at(struct process *process, uint64_t address);
/* SYS_ICA_REVOKE: every mapping lend of block `id` (held by `holder`) ended
 * or made read-only, each on its mapper's core (MESSAGE_TRANSLATIONS_REVOKED
 * to another core, waited for); how many, or -E_PERMISSION. */
long mapping_lends_revoke(struct process *holder, uint64_t id, bool write_only);
/* On the mapper's core: its lend of `block` at `address` ended or made
 * read-only, its translation flushed; 1, or 0 when there is none. */
long mapping_lend_revoke_here(uint32_t pid, uint64_t block, uint64_t address, bool write_only);
/* The frame a mapping lend shows at `address` in `process`, or 0 when no
 * lend is mapped there. */
uint64_t mapping_lend_frame_at(struct process *process, uint64_t address);
/* A private page at `address` (a file region's, on the mapper's core): the
 * lend mapped there, if any, ends, and `frame` (the process's own, from the
 * m-kernel) is mapped instead, writable or not. */
void mapping_lend_swap_for_frame(struct process *process, uint64_t address, uint64_t frame,
                                 bool writable);
/* Ends every mapping lend of `process` in [base, base + bytes): unmapped,
 * counted off its block (an orphaned block whose last lend ends is freed).
 * On its core, or on the m-kernel once it has ended. */
void mapping_lends_end(struct process *process, uint64_t base, uint64_t bytes);
