/* journal_replay.c: recovery of a JBD2 journal at mount, in JBD2's three
 * passes: scan for the last committed transaction (checking every tag of it:
 * its home block, and its checksum), collect the revoke records, then write
 * every logged block that no later revoke cancels to its home. A committed
 * transaction with a bad tag refuses the whole replay before anything is
 * written. Then the journal is marked empty. */
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

static void note_bad_tag(struct journal *journal, uint32_t sequence, const char *problem)
{
    if (journal->bad_tag == NULL) {
        journal->bad_tag = problem;
        journal->bad_tag_sequence = sequence;
    }
}

/* A logged copy of the primary superblock must describe the same file system. */
static bool superblock_copy_matches(const struct journal *journal, const uint8_t *block)
{
    struct ext2_superblock copy;
    uint32_t offset = journal->block_size == 1024 ? 0 : EXT2_SUPERBLOCK_OFFSET;
    memcpy(&copy, block + offset, sizeof copy);
    const struct ext2_superblock *now = &journal->fs->superblock;
    return copy.s_magic == EXT2_MAGIC && copy.s_blocks_count == now->s_blocks_count &&
           copy.s_inodes_count == now->s_inodes_count &&
           copy.s_log_block_size == now->s_log_block_size &&
           copy.s_blocks_per_group == now->s_blocks_per_group &&
           copy.s_inodes_per_group == now->s_inodes_per_group &&
           copy.s_first_data_block == now->s_first_data_block &&
           copy.s_inode_size == now->s_inode_size && copy.s_first_ino == now->s_first_ino;
}

/* A logged copy of descriptor block `index` must name the same bitmaps and
 * inode tables (they never move). */
static bool descriptors_copy_matches(struct journal *journal, const uint8_t *block, uint32_t index)
{
    struct ext2_fs *fs = journal->fs;
    for (uint32_t i = 0; i < fs->descriptors_per_block; i++) {
        uint32_t group = index * fs->descriptors_per_block + i;
        if (group >= fs->group_count)
            break;
        struct ext2_group_descriptor copy, now;
        memcpy(&copy, block + i * sizeof copy, sizeof copy);
        if (ext2_read_group(fs, group, &now) < 0 || copy.bg_block_bitmap != now.bg_block_bitmap ||
            copy.bg_inode_bitmap != now.bg_inode_bitmap ||
            copy.bg_inode_table != now.bg_inode_table)
            return false;
    }
    return true;
}

/* A logged copy of the inode-table block that holds the journal's inode
 * must hold that inode unchanged (its type, size, links and block tree):
 * replayed, another one would leave no journal (e2fsck: "Superblock has an
 * invalid journal"), and nothing in this log would be what it seems. */
static bool journal_inode_copy_matches(struct journal *journal, const uint8_t *block,
                                       uint32_t flags)
{
    struct ext2_inode copy;
    memcpy(&copy, block + journal->inode_offset, sizeof copy);
    if (journal->inode_offset == 0 && (flags & JBD2_FLAG_ESCAPE)) {
        uint32_t magic = jbd2_be32(JBD2_MAGIC);
        memcpy(&copy, &magic, sizeof magic); /* the escaped first word */
    }
    const struct ext2_inode *now = &journal->inode;
    return copy.i_mode == now->i_mode && copy.i_size == now->i_size &&
           copy.i_size_high == now->i_size_high && copy.i_links_count == now->i_links_count &&
           copy.i_flags == now->i_flags &&
           memcmp(copy.i_block, now->i_block, sizeof copy.i_block) == 0;
}

/* The home of a logged block: inside the file system, not the journal, and
 * not a backup or reserved descriptor block; a copy of the superblock, of
 * the descriptors or of the journal's inode must match them. NULL when it
 * passes, else the problem. */
static const char *check_tag_home(struct journal *journal, uint32_t position, const struct tag *tag)
{
    struct ext2_fs *fs = journal->fs;
    uint32_t home = tag->block;
    if (!ext2_block_in_range(fs, home))
        return "a logged block lies outside the file system";
    for (uint32_t i = 0; i < fs->protected_count; i++)
        if (home >= fs->protected_ranges[i].first &&
            home - fs->protected_ranges[i].first < fs->protected_ranges[i].count)
            return "a logged block lies in the journal itself";
    if (home == journal->inode_block) {
        uint8_t *block = journal->buffers[0];
        if (journal_read_log_block(journal, position, block) < 0)
            return "a logged block is unreadable";
        if (!journal_inode_copy_matches(journal, block, tag->flags))
            return "a logged inode table block changes the journal's own inode";
    }
    uint32_t group = (home - fs->superblock.s_first_data_block) / fs->superblock.s_blocks_per_group;
    uint32_t first, count = ext2_group_super_blocks(fs, group, &first);
    if (home < first || home - first >= count)
        return NULL;
    if (group != 0 || home - first > fs->descriptor_blocks)
        return "a logged block is a backup superblock or a reserved descriptor block";
    uint8_t *block = journal->buffers[0];
    if (journal_read_log_block(journal, position, block) < 0)
        return "a logged block is unreadable";
    if (home == first)
        return superblock_copy_matches(journal, block) ? NULL
                                                       : "a logged superblock does not match";
    return descriptors_copy_matches(journal, block, home - first - 1)
               ? NULL
               : "logged group descriptors move bitmaps or inode tables";
}

/* csum v2/v3: the logged block's own checksum, checked in the scan. */
static const char *check_tag_checksum(struct journal *journal, uint32_t position,
                                      const struct tag *tag, uint32_t sequence)
{
    if (journal->checksum_version == 0)
        return NULL;
    uint8_t *block = journal->buffers[0];
    if (journal_read_log_block(journal, position, block) < 0)
        return "a logged block is unreadable";
    return tag_checksum_matches(journal, tag, block, sequence)
               ? NULL
               : "a logged block's checksum is wrong";
}

static void check_tag(struct journal *journal, uint32_t position, const struct tag *tag,
                      uint32_t sequence)
{
    const char *problem = check_tag_home(journal, position, tag);
    if (problem == NULL)
        problem = check_tag_checksum(journal, position, tag, sequence);
    if (problem != NULL)
        note_bad_tag(journal, sequence, problem);
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
        if (pass == PASS_SCAN)
            check_tag(journal, journal_wrap(journal, position + (uint32_t)count), &tag, sequence);
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
    /* Blocks a transaction that never committed freed and reused for data:
     * FS's kept copy says which (kept_transaction.c). */
    for (uint32_t i = 0; i < journal->kept_revoke_count; i++)
        block_set_put(&journal->revoked, journal->kept_revokes[i], journal->kept_revoke_sequence);
    journal->bad_tag = NULL;
    int64_t end = walk_log(journal, PASS_SCAN, 0);
    if (end >= 0 && journal->bad_tag != NULL &&
        (int32_t)(journal->bad_tag_sequence - (uint32_t)end) < 0) {
        journal->problem = journal->bad_tag; /* in a committed transaction: nothing replayed */
        return -E_CORRUPT;
    }
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
    journal->first_uncommitted = (uint32_t)end;
    journal->start = 0;
    status = journal_write_superblock(journal);
    if (status == 0)
        status = journal_flush(journal);
    if (status < 0)
        return status;
    return (int)(journal->statistics.transactions_replayed - before);
}
