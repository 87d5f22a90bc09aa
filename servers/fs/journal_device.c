/* journal_device.c: the ext2_device the library writes through on ext3.
 * Metadata joins the running transaction (and is read back from it); file
 * data is written in place (ordered mode). As in JBD2, a block freed by the
 * running transaction is not reused before it commits, and a freed block
 * with a copy in the log is revoked, so a replay never writes old metadata
 * over new data. Where that cannot be promised (no revoke record possible,
 * too many frees to track) the data block is logged like metadata. The
 * device below hears of each free and may keep a block from reuse too. */
#include "ext2_internal.h"
#include "journal.h"

static int read_bytes(void *context, uint64_t block, uint32_t offset, void *buffer, uint32_t length)
{
    struct journal *journal = context;
    uint32_t slot = block_set_find(&journal->transaction, (uint32_t)block);
    if (slot != UINT32_MAX) {
        memcpy(buffer, journal->buffers[journal->transaction.values[slot]] + offset, length);
        return 0;
    }
    struct ext2_device *lower = journal->lower.device;
    return lower->read_bytes(lower->context, block, offset, buffer, length);
}

static int write_metadata(void *context, uint64_t block, const void *buffer)
{
    struct journal *journal = context;
    uint8_t *copy = journal_transaction_buffer(journal, (uint32_t)block);
    if (copy == NULL) {
        /* One operation outgrew the transaction: commit what it did so far. */
        journal->statistics.forced_commits++;
        int status = journal_commit(journal);
        if (status < 0)
            return status;
        copy = journal_transaction_buffer(journal, (uint32_t)block);
        if (copy == NULL)
            return -E_NO_SPACE;
    }
    memcpy(copy, buffer, journal->fs->block_size);
    return 0;
}

static bool must_log_data(const struct journal *journal, uint32_t block)
{
    return journal->freed_overflow || block_set_contains(&journal->transaction, block) ||
           block_set_contains(&journal->freed, block) ||
           block_set_contains(&journal->logged, block);
}

static bool may_allocate(void *context, uint64_t block)
{
    const struct journal *journal = context;
    const struct ext2_device *lower = journal->lower.device;
    return !block_set_contains(&journal->freed, (uint32_t)block) &&
           (lower->may_allocate == NULL || lower->may_allocate(lower->context, block));
}

static int write_data(void *context, uint64_t block, const void *buffer)
{
    struct journal *journal = context;
    if (must_log_data(journal, (uint32_t)block)) {
        journal->statistics.data_blocks_logged++;
        return write_metadata(context, block, buffer);
    }
    struct ext2_device *lower = journal->lower.device;
    return lower->write_block(lower->context, block, buffer);
}

/* A freed block: not reused before the commit, and a copy of it in the log
 * is revoked (then its reuse for data needs no logging); the device below
 * is told too (FS's: BLK retires it, freed_blocks.c). */
static void forget(void *context, uint64_t number)
{
    struct journal *journal = context;
    uint32_t block = (uint32_t)number;
    const struct ext2_device *lower = journal->lower.device;
    if (lower->forget != NULL)
        lower->forget(lower->context, number);
    if (block_set_contains(&journal->freed, block))
        return;
    if (!block_set_put(&journal->freed, block, 0))
        journal->freed_overflow = true;
    if (journal->version == 2 && block_set_contains(&journal->logged, block) &&
        journal->revoke_count < JOURNAL_FREED_CAPACITY) {
        journal->revokes[journal->revoke_count++] = block;
        journal->changes++;
        block_set_remove(&journal->logged, block);
    }
}

void journal_device_init(struct journal *journal)
{
    journal->device.context = journal;
    journal->device.block_size = journal->fs->block_size;
    journal->device.read_bytes = read_bytes;
    journal->device.write_block = write_metadata;
    journal->device.write_data = write_data;
    journal->device.forget = forget;
    journal->device.may_allocate = may_allocate;
}
