/* journal_commit.c: the running transaction and its commit in ordered mode:
 * revoke and descriptor blocks with the logged copies go to the log, a
 * barrier makes them (and every data block written in place) durable, then
 * the commit block and a second barrier; only then are the metadata blocks
 * written home. A checkpoint makes the homes durable and empties the log. */
#include "jbd2_format.h"
#include "ext2_internal.h"
#include "journal.h"

static void drop_revoke(struct journal *journal, uint32_t block)
{
    for (uint32_t i = 0; i < journal->revoke_count;) {
        if (journal->revokes[i] == block) {
            journal->revokes[i] = journal->revokes[--journal->revoke_count];
            journal->changes++;
        } else {
            i++;
        }
    }
}

uint8_t *journal_transaction_buffer(struct journal *journal, uint32_t block)
{
    /* logged again after a revoke in this transaction (past an overflow of
     * the freed set, any block may have been revoked) */
    if (journal->revoke_count > 0 &&
        (journal->freed_overflow || block_set_contains(&journal->freed, block)))
        drop_revoke(journal, block);
    uint32_t slot = block_set_find(&journal->transaction, block);
    journal->changes++;
    if (slot != UINT32_MAX) {
        journal->changed[journal->transaction.values[slot]] = 1;
        return journal->buffers[journal->transaction.values[slot]];
    }
    if (journal->transaction_blocks >= journal_transaction_limit(journal))
        return NULL;
    uint32_t index = journal->transaction_blocks++;
    journal->changed[index] = 1;
    if (index == 0)
        journal->transaction_started = journal->fs->time;
    journal->transaction_numbers[index] = block;
    block_set_put(&journal->transaction, block, index);
    return journal->buffers[index];
}

static uint32_t tags_per_descriptor(const struct journal *journal)
{
    return (journal->block_size - sizeof(struct jbd2_header) - 16) / journal->tag_bytes;
}

static uint32_t revokes_per_block(const struct journal *journal)
{
    uint32_t entry = (journal->incompat & JBD2_FEATURE_INCOMPAT_64BIT) ? 8 : 4;
    return (journal->block_size - sizeof(struct jbd2_revoke_header)) / entry;
}

static uint32_t log_blocks_needed(const struct journal *journal)
{
    uint32_t per = tags_per_descriptor(journal), revokes = revokes_per_block(journal);
    uint32_t descriptors = (journal->transaction_blocks + per - 1) / per;
    uint32_t revoke_blocks = (journal->revoke_count + revokes - 1) / revokes;
    return descriptors + journal->transaction_blocks + revoke_blocks + 1;
}

static void header(struct journal *journal, uint8_t *block, uint32_t type)
{
    memset(block, 0, journal->block_size);
    struct jbd2_header h = {jbd2_be32(JBD2_MAGIC), jbd2_be32(type), jbd2_be32(journal->next_tid)};
    memcpy(block, &h, sizeof h);
}

static int write_revokes(struct journal *journal, uint32_t *position)
{
    uint8_t *block = journal->scratch;
    uint32_t per = revokes_per_block(journal);
    uint32_t entry = (journal->incompat & JBD2_FEATURE_INCOMPAT_64BIT) ? 8 : 4;
    for (uint32_t done = 0; done < journal->revoke_count;) {
        uint32_t count = journal->revoke_count - done < per ? journal->revoke_count - done : per;
        header(journal, block, JBD2_REVOKE_BLOCK);
        uint32_t used = sizeof(struct jbd2_revoke_header) + count * entry;
        uint32_t be_used = jbd2_be32(used);
        memcpy(block + sizeof(struct jbd2_header), &be_used, sizeof be_used);
        for (uint32_t i = 0; i < count; i++) {
            uint32_t number = jbd2_be32(journal->revokes[done + i]);
            memcpy(block + sizeof(struct jbd2_revoke_header) + i * entry + entry - 4, &number, 4);
        }
        int status = journal_write_log_block(journal, (*position)++, block);
        if (status < 0)
            return status;
        done += count;
        journal->statistics.revokes_written += count;
    }
    return 0;
}

static void put_tag(struct journal *journal, uint8_t *descriptor, uint32_t *offset, uint32_t index,
                    bool last)
{
    const uint8_t *data = journal->buffers[index];
    uint32_t magic = jbd2_be32(JBD2_MAGIC);
    struct jbd2_block_tag tag = {.t_blocknr = jbd2_be32(journal->transaction_numbers[index])};
    uint16_t flags = *offset == sizeof(struct jbd2_header) ? 0 : JBD2_FLAG_SAME_UUID;
    if (memcmp(data, &magic, sizeof magic) == 0)
        flags |= JBD2_FLAG_ESCAPE;
    if (last)
        flags |= JBD2_FLAG_LAST_TAG;
    tag.t_flags = jbd2_be16(flags);
    memcpy(descriptor + *offset, &tag, journal->tag_bytes);
    *offset += journal->tag_bytes;
    if (!(flags & JBD2_FLAG_SAME_UUID)) {
        memcpy(descriptor + *offset, journal->uuid, 16);
        *offset += 16;
    }
}

/* A block written to the log goes into the commit block's crc32_be when the journal has
 * the v1 checksum feature; without it (ext3's default) nothing reads the sum, and at some
 * 6.7 instructions a byte it was half the cost of an fsync. */
static void note_checksum(struct journal *journal, const void *block)
{
    if (journal->checksum_v1)
        journal->transaction_crc =
            journal_crc32_be(journal->transaction_crc, block, journal->block_size);
}

/* The logged copy of a block: escaped when it begins with the JBD2 magic. */
static int write_copy(struct journal *journal, uint32_t position, uint32_t index)
{
    const uint8_t *data = journal->buffers[index];
    uint32_t magic = jbd2_be32(JBD2_MAGIC);
    if (memcmp(data, &magic, sizeof magic) == 0) {
        uint8_t *copy = journal->scratch;
        memcpy(copy, data, journal->block_size);
        memset(copy, 0, sizeof magic);
        data = copy;
    }
    note_checksum(journal, data);
    return journal_write_log_block(journal, position, data);
}

static int write_descriptors(struct journal *journal, uint32_t *position)
{
    uint8_t descriptor[EXT2_MAX_BLOCK_SIZE];
    uint32_t per = tags_per_descriptor(journal), total = journal->transaction_blocks;
    for (uint32_t first = 0; first < total; first += per) {
        uint32_t count = total - first < per ? total - first : per;
        header(journal, descriptor, JBD2_DESCRIPTOR_BLOCK);
        uint32_t offset = sizeof(struct jbd2_header);
        for (uint32_t i = 0; i < count; i++)
            put_tag(journal, descriptor, &offset, first + i, i + 1 == count);
        uint32_t descriptor_position = (*position)++;
        note_checksum(journal, descriptor);
        int status = journal_write_log_block(journal, descriptor_position, descriptor);
        for (uint32_t i = 0; i < count && status == 0; i++)
            status = write_copy(journal, (*position)++, first + i);
        if (status < 0)
            return status;
    }
    journal->statistics.blocks_logged += total;
    return 0;
}

static int write_commit_block(struct journal *journal, uint32_t position)
{
    uint8_t *block = journal->scratch;
    header(journal, block, JBD2_COMMIT_BLOCK);
    struct jbd2_commit_block commit;
    memcpy(&commit, block, sizeof commit);
    commit.h_commit_sec = jbd2_be64(journal->fs->time);
    if (journal->checksum_v1) {
        commit.h_chksum_type = JOURNAL_CRC32_CHECKSUM;
        commit.h_chksum_size = JOURNAL_CRC32_CHECKSUM_SIZE;
        commit.h_chksum[0] = jbd2_be32(journal->transaction_crc);
    }
    memcpy(block, &commit, sizeof commit);
    return journal_write_log_block(journal, position, block);
}

/* After the commit: metadata to its home blocks (the cache writes them back). */
static int write_homes(struct journal *journal)
{
    struct ext2_device *device = journal->lower.device;
    for (uint32_t i = 0; i < journal->transaction_blocks; i++) {
        uint32_t block = journal->transaction_numbers[i];
        int status = device->write_block(device->context, block, journal->buffers[i]);
        if (status < 0)
            return status;
        block_set_put(&journal->logged, block, 0);
    }
    return 0;
}

static void end_transaction(struct journal *journal)
{
    block_set_clear(&journal->transaction);
    block_set_clear(&journal->freed);
    memset(journal->changed, 0, journal->transaction_blocks);
    journal->changes++;
    journal->transaction_blocks = 0;
    journal->revoke_count = 0;
    journal->freed_overflow = false;
    journal->next_tid++;
    journal->statistics.commits++;
}

static int checkpoint(struct journal *journal)
{
    int status = journal_flush(journal);
    if (status < 0 || journal->log_empty)
        return status;
    journal->start = 0;
    journal->sequence = journal->next_tid;
    status = journal_write_superblock(journal);
    if (status == 0)
        status = journal_flush(journal);
    if (status < 0)
        return status;
    journal->log_empty = true;
    journal->head = journal->first;
    block_set_clear(&journal->logged);
    journal->statistics.checkpoints++;
    return 0;
}

static bool fits_in_log(const struct journal *journal)
{
    return journal->head + log_blocks_needed(journal) <= journal->maxlen &&
           journal->logged.count + journal->transaction_blocks <= JOURNAL_LOGGED_CAPACITY;
}

/* The first transaction after a checkpoint sets s_start again. */
static int open_log(struct journal *journal)
{
    if (!journal->log_empty)
        return 0;
    journal->start = journal->first;
    journal->sequence = journal->next_tid;
    int status = journal_write_superblock(journal);
    if (status == 0)
        journal->log_empty = false;
    return status;
}

int journal_commit(struct journal *journal)
{
    if (journal->transaction_blocks == 0 && journal->revoke_count == 0)
        return journal_flush(journal); /* data written in place is durable too */
    int status = fits_in_log(journal) ? 0 : checkpoint(journal);
    if (status == 0)
        status = open_log(journal);
    uint32_t position = journal->head;
    journal->transaction_crc = ~0u;
    if (status == 0)
        status = write_revokes(journal, &position);
    if (status == 0)
        status = write_descriptors(journal, &position);
    if (status == 0)
        status = journal_flush(journal); /* data, log copies, journal superblock */
    if (status == 0)
        status = write_commit_block(journal, position++);
    if (status == 0)
        status = journal_flush(journal);
    if (status == 0)
        status = write_homes(journal);
    if (status < 0)
        return status; /* the transaction stays; a later commit retries it */
    journal->head = position;
    end_transaction(journal);
    return 0;
}

int journal_sync(struct journal *journal)
{
    int status = journal_commit(journal);
    return status < 0 ? status : checkpoint(journal);
}

int journal_commit_and_remount(struct journal *journal)
{
    int status = journal_sync(journal);
    if (status == 0)
        status = ext2_mount(journal->fs, journal->lower.device);
    return status < 0 ? status : journal_start(journal);
}
