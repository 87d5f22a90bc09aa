/* journal_replay.c: recovery of a JBD2 journal at mount, in JBD2's three
 * passes: scan for the last committed transaction, collect the revoke
 * records, then write every logged block that no later revoke cancels to
 * its home. Then the journal is marked empty. */
#include "jbd2_format.h"
#include "ext2_internal.h"
#include "journal.h"

enum pass { PASS_SCAN, PASS_REVOKE, PASS_REPLAY };

struct tag {
    uint32_t block;
    uint32_t flags;
    uint32_t checksum; /* csum v3: 32 bits; v2: 16 */
};

/* The tag at `offset` of a descriptor block; false past the last one. Without
 * csum v3: blocknr, checksum (16 bits, v2), flags (16), [blocknr_high];
 * csum v3: blocknr, flags (32), blocknr_high, checksum (32). */
static bool read_tag(const struct journal *journal, const uint8_t *descriptor, uint32_t *offset,
                     struct tag *tag)
{
    if (*offset + journal->tag_bytes > journal->block_size - journal->tail_bytes)
        return false;
    uint32_t words[4] = {0, 0, 0, 0};
    memcpy(words, descriptor + *offset,
           journal->tag_bytes < sizeof words ? journal->tag_bytes : sizeof words);
    tag->block = jbd2_be32(words[0]);
    uint32_t high = jbd2_be32(words[2]);
    if (journal->checksum_version == 3) {
        tag->flags = jbd2_be32(words[1]);
        tag->checksum = jbd2_be32(words[3]);
    } else {
        struct jbd2_block_tag raw;
        memcpy(&raw, words, sizeof raw);
        tag->flags = jbd2_be16(raw.t_flags);
        tag->checksum = jbd2_be16(raw.t_checksum);
    }
    if ((journal->incompat & JBD2_FEATURE_INCOMPAT_64BIT) && high != 0)
        tag->block = UINT32_MAX; /* beyond any ext2 block number: refused later */
    *offset += journal->tag_bytes;
    if (!(tag->flags & JBD2_FLAG_SAME_UUID))
        *offset += 16;
    return true;
}

/* csum v2/v3: crc32c(seed, sequence, the block as logged). */
static bool tag_checksum_matches(const struct journal *journal, const struct tag *tag,
                                 const uint8_t *block, uint32_t sequence)
{
    if (journal->checksum_version == 0)
        return true;
    uint32_t be_sequence = jbd2_be32(sequence);
    uint32_t crc = journal_crc32c(journal->checksum_seed, &be_sequence, sizeof be_sequence);
    crc = journal_crc32c(crc, block, journal->block_size);
    return journal->checksum_version == 3 ? crc == tag->checksum : (crc & 0xffff) == tag->checksum;
}

/* csum v2/v3: a descriptor or revoke block ends with crc32c(seed, block with
 * that tail zeroed); a commit block holds it in h_chksum[0]. */
static bool block_checksum_matches(struct journal *journal, const uint8_t *block, uint32_t at)
{
    if (journal->checksum_version == 0)
        return true;
    uint8_t *copy = journal->buffers[1];
    memcpy(copy, block, journal->block_size);
    uint32_t provided;
    memcpy(&provided, copy + at, sizeof provided);
    memset(copy + at, 0, sizeof provided);
    return journal_crc32c(journal->checksum_seed, copy, journal->block_size) == jbd2_be32(provided);
}

static bool tail_checksum_matches(struct journal *journal, const uint8_t *block)
{
    return block_checksum_matches(journal, block, journal->block_size - 4);
}

static int replay_block(struct journal *journal, uint32_t position, const struct tag *tag,
                        uint32_t sequence)
{
    uint32_t slot = block_set_find(&journal->revoked, tag->block);
    if (slot != UINT32_MAX && journal->revoked.values[slot] >= sequence)
        return 0; /* revoked by this or a later transaction */
    if (!ext2_block_in_range(journal->fs, tag->block)) {
        journal->problem = "a logged block lies outside the file system";
        return -E_CORRUPT;
    }
    uint8_t *block = journal->buffers[0];
    int status = journal_read_log_block(journal, position, block);
    if (status < 0)
        return status;
    if (!tag_checksum_matches(journal, tag, block, sequence)) {
        journal->problem = "a logged block's checksum is wrong";
        return -E_CORRUPT;
    }
    if (tag->flags & JBD2_FLAG_ESCAPE) {
        uint32_t magic = jbd2_be32(JBD2_MAGIC);
        memcpy(block, &magic, sizeof magic);
    }
    struct ext2_device *device = journal->lower.device;
    status = device->write_block(device->context, tag->block, block);
    if (status < 0)
        return status;
    journal->statistics.blocks_replayed++;
    return 0;
}

static int checksum_logged_block(struct journal *journal, uint32_t position)
{
    uint8_t *block = journal->buffers[0];
    int status = journal_read_log_block(journal, journal_wrap(journal, position), block);
    if (status == 0)
        journal->transaction_crc =
            journal_crc32_be(journal->transaction_crc, block, journal->block_size);
    return status;
}

/* A v1 checksum in the commit block must match the transaction's blocks
 * (a commit block without one, type and size 0, is accepted as JBD2 does). */
static bool commit_checksum_matches(struct journal *journal)
{
    if (!journal->checksum_v1 || journal->checksum_version != 0)
        return true;
    struct jbd2_commit_block commit;
    memcpy(&commit, journal->scratch, sizeof commit);
    uint32_t found = jbd2_be32(commit.h_chksum[0]);
    if (commit.h_chksum_type == 0 && commit.h_chksum_size == 0 && found == 0)
        return true;
    return commit.h_chksum_type == JOURNAL_CRC32_CHECKSUM &&
           commit.h_chksum_size == JOURNAL_CRC32_CHECKSUM_SIZE && found == journal->transaction_crc;
}

/* Walks a descriptor's tags; returns the number of logged blocks after it. */
static int descriptor_pass(struct journal *journal, uint32_t position, uint32_t sequence,
                           enum pass pass)
{
    uint8_t descriptor[EXT2_MAX_BLOCK_SIZE];
    memcpy(descriptor, journal->scratch, journal->block_size);
    uint32_t offset = sizeof(struct jbd2_header);
    struct tag tag;
    int count = 0;
    if (pass == PASS_SCAN && journal->checksum_v1)
        journal->transaction_crc =
            journal_crc32_be(journal->transaction_crc, descriptor, journal->block_size);
    while (read_tag(journal, descriptor, &offset, &tag)) {
        count++;
        if (pass == PASS_SCAN && journal->checksum_v1) {
            int status = checksum_logged_block(journal, position + (uint32_t)count);
            if (status < 0)
                return status;
        }
        if (pass == PASS_REPLAY) {
            int status = replay_block(journal, journal_wrap(journal, position + (uint32_t)count),
                                      &tag, sequence);
            if (status < 0)
                return status;
        }
        if (tag.flags & JBD2_FLAG_LAST_TAG)
            break;
    }
    return count;
}

static int revoke_pass(struct journal *journal, uint32_t sequence)
{
    const uint8_t *block = journal->scratch;
    if (!tail_checksum_matches(journal, block)) {
        journal->problem = "a revoke block's checksum is wrong";
        return -E_CORRUPT;
    }
    struct jbd2_revoke_header header;
    memcpy(&header, block, sizeof header);
    uint32_t used = jbd2_be32(header.r_count);
    uint32_t entry = (journal->incompat & JBD2_FEATURE_INCOMPAT_64BIT) ? 8 : 4;
    if (used > journal->block_size - journal->tail_bytes || used < sizeof header) {
        journal->problem = "a revoke block's count is out of range";
        return -E_CORRUPT;
    }
    for (uint32_t offset = sizeof header; offset + entry <= used; offset += entry) {
        uint32_t number;
        memcpy(&number, block + offset + entry - 4, sizeof number); /* low word, big-endian */
        number = jbd2_be32(number);
        uint32_t slot = block_set_find(&journal->revoked, number);
        if (slot != UINT32_MAX && journal->revoked.values[slot] >= sequence)
            continue;
        if (!block_set_put(&journal->revoked, number, sequence)) {
            journal->problem = "too many revoke records in the journal";
            return -E_TOO_BIG;
        }
    }
    return 0;
}

/* One pass over the log from s_start; returns the first uncommitted sequence. */
static int64_t walk_log(struct journal *journal, enum pass pass, uint32_t end)
{
    uint32_t position = journal->start, sequence = journal->sequence;
    journal->transaction_crc = ~0u;
    for (uint32_t steps = 0; steps < journal->maxlen; steps++) {
        if (pass != PASS_SCAN && sequence == end)
            break;
        int status = journal_read_log_block(journal, position, journal->scratch);
        if (status < 0)
            return status;
        struct jbd2_header header;
        memcpy(&header, journal->scratch, sizeof header);
        if (jbd2_be32(header.h_magic) != JBD2_MAGIC || jbd2_be32(header.h_sequence) != sequence)
            break;
        uint32_t type = jbd2_be32(header.h_blocktype);
        if (type == JBD2_DESCRIPTOR_BLOCK) {
            if (pass == PASS_SCAN && !tail_checksum_matches(journal, journal->scratch))
                break; /* a torn descriptor: the log ends here */
            int count = descriptor_pass(journal, position, sequence, pass);
            if (count < 0)
                return count;
            position = journal_wrap(journal, position + 1 + (uint32_t)count);
        } else if (type == JBD2_REVOKE_BLOCK) {
            if (pass == PASS_REVOKE && (status = revoke_pass(journal, sequence)) < 0)
                return status;
            position = journal_wrap(journal, position + 1);
        } else if (type == JBD2_COMMIT_BLOCK) {
            if (pass == PASS_SCAN &&
                (!commit_checksum_matches(journal) ||
                 !block_checksum_matches(journal, journal->scratch,
                                         offsetof(struct jbd2_commit_block, h_chksum))))
                break; /* a torn transaction: the log ends before it */
            journal->transaction_crc = ~0u;
            if (pass == PASS_REPLAY)
                journal->statistics.transactions_replayed++;
            sequence++;
            position = journal_wrap(journal, position + 1);
        } else {
            break;
        }
    }
    return sequence;
}

int journal_replay(struct journal *journal)
{
    if (journal->start == 0)
        return 0;
    uint32_t before = (uint32_t)journal->statistics.transactions_replayed;
    block_set_init(&journal->revoked, journal->revoked_keys, journal->revoked_values,
                   JOURNAL_REVOKED_CAPACITY * 2);
    int64_t end = walk_log(journal, PASS_SCAN, 0);
    if (end >= 0)
        end = walk_log(journal, PASS_REVOKE, (uint32_t)end);
    if (end >= 0)
        end = walk_log(journal, PASS_REPLAY, (uint32_t)end);
    if (end < 0)
        return (int)end;
    int status = journal_flush(journal);
    if (status < 0)
        return status;
    /* One past the first uncommitted transaction, as JBD2 and e2fsck do:
     * its stray blocks can never pass for the next transaction's. */
    journal->sequence = (uint32_t)end + 1;
    journal->start = 0;
    status = journal_write_superblock(journal);
    if (status == 0)
        status = journal_flush(journal);
    if (status < 0)
        return status;
    return (int)(journal->statistics.transactions_replayed - before);
}
