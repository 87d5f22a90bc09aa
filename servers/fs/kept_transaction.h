/* kept_transaction.h: FS's copy of its running ext3 transaction in its kept
 * region, taken after every request before the answer, so an FS that ends
 * loses no metadata it acknowledged; with each copy the request's answer
 * (kept_answers.h). A copy is staged (changed blocks go to data slots the
 * copy does not use), closed by a 64-bit finish marker and only then
 * applied (the slots swapped in), so a copy cut short is left out. */
#pragma once
#include "journal.h"
#include "kept_answers.h"
#include <stdbool.h>
#include <stdint.h>

#define KEPT_STAGED_BLOCKS 64 /* blocks one request may change; beyond, FS commits */
/* Block copies: the transaction's, plus room for one request's new ones. */
#define KEPT_DATA_SLOTS (JOURNAL_TRANSACTION_BLOCKS + KEPT_STAGED_BLOCKS)

struct kept_transaction {
    /* The copy: the running transaction as of the last answered request. */
    uint64_t applied; /* finish marker of the last staged copy applied */
    uint64_t begin;   /* set before a copy is staged: begin > finish while it is */
    uint32_t tid;     /* the transaction's sequence number */
    uint32_t blocks;  /* its blocks: numbers[i], copied in data[where[i]] */
    uint32_t block_size;
    uint32_t revoke_count;
    uint32_t numbers[JOURNAL_TRANSACTION_BLOCKS];
    uint32_t where[JOURNAL_TRANSACTION_BLOCKS];
    uint32_t revokes[JOURNAL_FREED_CAPACITY];
    /* The staged copy of one request's changes. */
    uint32_t staged_tid, staged_blocks, staged_count, staged_revoke_count;
    uint32_t staged_block_size;
    uint32_t staged_has_answer;
    uint32_t staged_slots[KEPT_STAGED_BLOCKS];
    uint32_t staged_numbers[KEPT_STAGED_BLOCKS];
    uint32_t staged_where[KEPT_STAGED_BLOCKS]; /* data slots no applied block uses */
    uint32_t staged_revokes[JOURNAL_FREED_CAPACITY];
    struct kept_answer staged_answer;
    uint64_t finish; /* written last: the staged copy is whole when finish > applied */
    uint8_t data[KEPT_DATA_SLOTS][EXT2_MAX_BLOCK_SIZE];
};

/* Everything FS keeps, in its kept region's state (kept_state.h). */
struct fs_kept {
    struct kept_answers answers;
    struct kept_transaction transaction;
};

/* After a restart: applies a whole staged copy the old FS did not apply
 * (a finished copy); a copy cut short is left out (logged). */
void kept_transaction_recover(struct fs_kept *kept);
/* Before mounting: the kept copy's revokes, honoured by the journal's replay. */
void kept_transaction_prepare_replay(struct fs_kept *kept, struct journal *journal);
/* After mounting: commits the kept blocks if the log did not commit them.
 * Returns how many blocks were committed, or an error. */
long kept_transaction_commit(struct fs_kept *kept, struct journal *journal);
/* The journal's change count when the copy was last taken (UINT64_MAX
 * after a start: the first request takes one). The count goes up with
 * every change to the transaction, revoke and commit, so a copy taken at
 * the count it has now holds the running transaction as it is. */
extern uint64_t kept_transaction_copied_changes;
/* kept_transaction_save when there is something to copy (apart, so the
 * common request that changed nothing saves no registers). */
void kept_transaction_save_copy(struct fs_kept *kept, struct journal *journal,
                                const struct kept_answer *answer);
/* After a request, before its answer: copies the transaction blocks it
 * changed (journal NULL on ext2: none) and its answer (NULL: none).
 * Inline: a request that changed nothing is two tests. */
static inline void kept_transaction_save(struct fs_kept *kept, struct journal *journal,
                                         const struct kept_answer *answer)
{
    bool unchanged = journal == NULL || journal->changes == kept_transaction_copied_changes;
    if (answer != NULL || !unchanged)
        kept_transaction_save_copy(kept, journal, answer);
}
