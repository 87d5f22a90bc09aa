/* kept_transaction.c: FS's kept copy of its running transaction
 * (kept_transaction.h). After each request the changed blocks and the
 * answer are staged, the finish marker is written, then the stage is
 * applied to the copy; a restart applies a finished stage again (it is a
 * redo record) and commits the copy unless the log already committed it. */
#include "kept_transaction.h"
#include <formica/errors.h>
#include <stdio.h>
#include <string.h>

/* Keeps the compiler from moving stores across the finish marker. */
static void store_barrier(void)
{
    __asm__ volatile("" ::: "memory");
}

static void apply_staged(struct fs_kept *kept)
{
    struct kept_transaction *t = &kept->transaction;
    for (uint32_t i = 0; i < t->staged_count; i++) {
        uint32_t slot = t->staged_slots[i];
        t->numbers[slot] = t->staged_numbers[i];
        t->where[slot] = t->staged_where[i];
    }
    t->tid = t->staged_tid;
    t->blocks = t->staged_blocks;
    t->block_size = t->staged_block_size;
    t->revoke_count = t->staged_revoke_count;
    memcpy(t->revokes, t->staged_revokes, t->staged_revoke_count * sizeof t->revokes[0]);
    if (t->staged_has_answer)
        kept_answers_store(&kept->answers, &t->staged_answer);
    store_barrier();
    t->applied = t->finish;
}

void kept_transaction_recover(struct fs_kept *kept)
{
    struct kept_transaction *t = &kept->transaction;
    if (t->finish > t->applied) {
        printf("fs: applying the kept copy of the last request (finished, not yet applied)\n");
        apply_staged(kept);
    } else if (t->begin > t->applied) {
        printf("fs: a kept copy was cut short: the request it belonged to was not answered\n");
    }
}

void kept_transaction_prepare_replay(struct fs_kept *kept, struct journal *journal)
{
    struct kept_transaction *t = &kept->transaction;
    journal->kept_revokes = t->revokes;
    journal->kept_revoke_count = t->revoke_count;
    journal->kept_revoke_sequence = t->tid;
}

long kept_transaction_commit(struct fs_kept *kept, struct journal *journal)
{
    struct kept_transaction *t = &kept->transaction;
    journal->kept_revoke_count = 0;
    if (t->blocks == 0)
        return 0;
    if (t->block_size != journal->block_size) {
        printf("fs: kept transaction of %u-byte blocks, file system has %u: left out\n",
               t->block_size, journal->block_size);
        return -E_CORRUPT;
    }
    if ((int32_t)(t->tid - journal->first_uncommitted) < 0) {
        printf("fs: kept transaction %u was committed in the log already\n", t->tid);
        return 0;
    }
    for (uint32_t i = 0; i < t->blocks; i++) {
        uint8_t *copy = journal_transaction_buffer(journal, t->numbers[i]);
        if (copy == NULL || t->where[i] >= KEPT_DATA_SLOTS)
            return -E_CORRUPT;
        memcpy(copy, t->data[t->where[i]], journal->block_size);
    }
    long status = journal_commit_and_remount(journal);
    if (status < 0)
        return status;
    uint32_t committed = t->blocks;
    t->blocks = 0;
    t->revoke_count = 0;
    t->tid = journal->next_tid;
    return committed;
}

/* Data slots the applied copy uses (rebuilt for each copy: after a commit
 * the old transaction's slots are free again). */
static uint8_t slot_used[KEPT_DATA_SLOTS];

static void find_used_slots(const struct kept_transaction *t)
{
    memset(slot_used, 0, sizeof slot_used);
    for (uint32_t i = 0; i < t->blocks && i < JOURNAL_TRANSACTION_BLOCKS; i++)
        if (t->where[i] < KEPT_DATA_SLOTS)
            slot_used[t->where[i]] = 1;
}

static uint32_t take_free_slot(void)
{
    for (uint32_t slot = 0; slot < KEPT_DATA_SLOTS; slot++)
        if (!slot_used[slot]) {
            slot_used[slot] = 1;
            return slot;
        }
    return KEPT_DATA_SLOTS; /* cannot happen: there are KEPT_STAGED_BLOCKS spare */
}

/* Stages the changed transaction blocks; false when more changed than the
 * stage holds. */
static bool stage_blocks(struct kept_transaction *t, struct journal *journal)
{
    t->staged_count = 0;
    t->staged_tid = t->staged_blocks = t->staged_revoke_count = 0;
    t->staged_block_size = 0;
    if (journal == NULL)
        return true;
    find_used_slots(t);
    for (uint32_t slot = 0; slot < journal->transaction_blocks; slot++) {
        if (!journal->changed[slot])
            continue;
        if (t->staged_count == KEPT_STAGED_BLOCKS)
            return false;
        uint32_t i = t->staged_count++;
        t->staged_slots[i] = slot;
        t->staged_numbers[i] = journal->transaction_numbers[slot];
        t->staged_where[i] = take_free_slot();
        memcpy(t->data[t->staged_where[i]], journal->buffers[slot], journal->block_size);
    }
    t->staged_tid = journal->next_tid;
    t->staged_blocks = journal->transaction_blocks;
    t->staged_block_size = journal->block_size;
    t->staged_revoke_count = journal->revoke_count;
    memcpy(t->staged_revokes, journal->revokes, journal->revoke_count * sizeof t->revokes[0]);
    return true;
}

uint64_t kept_transaction_copied_changes = UINT64_MAX; /* kept_transaction.h */

/* The copy, when there is something to copy (kept_transaction.h). */
void kept_transaction_save_copy(struct fs_kept *kept, struct journal *journal,
                                const struct kept_answer *answer)
{
    struct kept_transaction *t = &kept->transaction;
    t->begin = t->applied + 1;
    store_barrier();
    if (!stage_blocks(t, journal)) {
        /* More than a stage holds: commit, the log keeps it instead. */
        int status = journal_commit(journal);
        if (status < 0 || !stage_blocks(t, journal)) {
            printf("fs: no kept copy of this request: %s\n",
                   status < 0 ? error_text(status) : "too many blocks");
            return;
        }
    }
    t->staged_has_answer = answer != NULL;
    if (answer != NULL)
        t->staged_answer = *answer;
    store_barrier();
    t->finish = t->applied + 1;
    store_barrier();
    apply_staged(kept);
    if (journal != NULL) {
        memset(journal->changed, 0, journal->transaction_blocks);
        kept_transaction_copied_changes = journal->changes;
    }
}
