/* journal.c: the journal of an ext3 file system: loading inode 8 and the
 * JBD2 superblock (refusing features it does not support), mapping log
 * blocks, writing the journal superblock, and mounting (replay, start). */
#include "jbd2_format.h"
#include "ext2_internal.h"
#include "journal.h"

#define SUPPORTED_INCOMPAT                                                                         \
    (JBD2_FEATURE_INCOMPAT_REVOKE | JBD2_FEATURE_INCOMPAT_64BIT | JBD2_FEATURE_INCOMPAT_CSUM_V2 |  \
     JBD2_FEATURE_INCOMPAT_CSUM_V3)

/* s_journal_inum and s_journal_dev in the superblock's tail (offsets 0xE0, 0xE4). */
static uint32_t superblock_word(const struct ext2_fs *fs, uint32_t offset)
{
    uint32_t word;
    memcpy(&word, (const uint8_t *)&fs->superblock + offset, sizeof word);
    return word;
}

static int refuse(struct journal *journal, int error, const char *why)
{
    journal->problem = why;
    return error;
}

int journal_map(struct journal *journal, uint32_t logical, uint32_t *physical)
{
    if (logical >= journal->maxlen && journal->maxlen != 0)
        return -E_CORRUPT;
    for (uint32_t i = 0; i < journal->run_count; i++) {
        const struct journal_run *run = &journal->runs[i];
        if (logical >= run->logical && logical - run->logical < run->count) {
            *physical = run->physical + (logical - run->logical);
            return 0;
        }
    }
    return -E_CORRUPT; /* a hole in the journal */
}

/* A block of the journal's tree: the log's runs and the blocks it owns. */
static int note_journal_block(void *context, uint32_t block, bool indirect, uint64_t logical)
{
    struct journal *journal = context;
    uint32_t owned = journal->owned_count;
    if (owned > 0 && journal->owned[owned - 1].first + journal->owned[owned - 1].count == block) {
        journal->owned[owned - 1].count++;
    } else if (journal->owned_count < EXT2_PROTECTED_RANGES) {
        journal->owned[journal->owned_count++] = (struct ext2_block_range){block, 1};
    } else {
        return -E_TOO_BIG;
    }
    if (indirect)
        return 0;
    struct journal_run *run =
        journal->run_count > 0 ? &journal->runs[journal->run_count - 1] : NULL;
    if (run != NULL && run->logical + run->count == logical &&
        run->physical + run->count == block) {
        run->count++;
    } else if (journal->run_count < JOURNAL_RUNS) {
        journal->runs[journal->run_count++] = (struct journal_run){(uint32_t)logical, block, 1};
    } else {
        return -E_TOO_BIG;
    }
    return 0;
}

/* The journal's blocks, found once: every log block must exist. */
static int find_journal_blocks(struct journal *journal, uint32_t log_blocks)
{
    journal->run_count = 0;
    journal->owned_count = 0;
    int status =
        ext2_visit_tree(journal->fs, &journal->inode, log_blocks, note_journal_block, journal);
    if (status == -E_TOO_BIG)
        return refuse(journal, -E_INVALID, "the journal is too fragmented for FS");
    if (status < 0)
        return refuse(journal, status, "the journal inode's blocks are corrupt");
    uint32_t mapped = 0;
    for (uint32_t i = 0; i < journal->run_count; i++)
        mapped += journal->runs[i].count;
    if (mapped != log_blocks)
        return refuse(journal, -E_CORRUPT, "the journal inode has holes");
    return 0;
}

/* The journal's blocks become metadata for the library (ext2_is_metadata). */
static void protect_journal_blocks(struct journal *journal)
{
    memcpy(journal->fs->protected_ranges, journal->owned,
           journal->owned_count * sizeof journal->owned[0]);
    journal->fs->protected_count = journal->owned_count;
    ext2_forget_checked_inodes(journal->fs);
}

int journal_read_log_block(struct journal *journal, uint32_t logical, void *buffer)
{
    uint32_t physical;
    int status = journal_map(journal, logical, &physical);
    if (status < 0)
        return status;
    struct ext2_device *device = journal->lower.device;
    status = device->read_bytes(device->context, physical, 0, buffer, journal->fs->block_size);
    return status < 0 ? status : 0;
}

int journal_write_log_block(struct journal *journal, uint32_t logical, const void *buffer)
{
    uint32_t physical;
    int status = journal_map(journal, logical, &physical);
    if (status < 0)
        return status;
    struct ext2_device *device = journal->lower.device;
    status = device->write_block(device->context, physical, buffer);
    return status < 0 ? status : 0;
}

int journal_flush(struct journal *journal)
{
    if (journal->lower.flush == NULL)
        return 0;
    return journal->lower.flush(journal->lower.flush_context);
}

uint32_t journal_wrap(const struct journal *journal, uint32_t position)
{
    if (position >= journal->maxlen)
        position = journal->first + (position - journal->maxlen);
    return position;
}

/* Rewrites s_sequence, s_start and the incompat features; the rest stays. */
int journal_write_superblock(struct journal *journal)
{
    uint8_t *block = journal->scratch;
    int status = journal_read_log_block(journal, 0, block);
    if (status < 0)
        return status;
    struct jbd2_superblock *sb = (struct jbd2_superblock *)block;
    sb->s_sequence = jbd2_be32(journal->sequence);
    sb->s_start = jbd2_be32(journal->start);
    if (journal->version == 2)
        sb->s_feature_incompat = jbd2_be32(journal->incompat);
    if (journal->checksum_version != 0) {
        sb->s_checksum = 0;
        sb->s_checksum = jbd2_be32(journal_crc32c(~0u, sb, sizeof *sb));
    }
    return journal_write_log_block(journal, 0, block);
}

/* csum v2/v3: crc32c checksums, seeded with the UUID; the superblock's own
 * must match. Only replay uses them: such journals come with metadata_csum,
 * which the library mounts read-only (no commits). */
static int check_block_checksums(struct journal *journal, const struct jbd2_superblock *sb)
{
    journal->checksum_version = (journal->incompat & JBD2_FEATURE_INCOMPAT_CSUM_V3) ? 3 : 2;
    journal->tail_bytes = 4;
    if (sb->s_checksum_type != JOURNAL_CRC32C_CHECKSUM)
        return refuse(journal, -E_INVALID, "journal checksum type is not crc32c");
    struct jbd2_superblock copy;
    memcpy(&copy, sb, sizeof copy);
    copy.s_checksum = 0;
    if (journal_crc32c(~0u, &copy, sizeof copy) != jbd2_be32(sb->s_checksum))
        return refuse(journal, -E_CORRUPT, "journal superblock checksum is wrong");
    journal->checksum_seed = journal_crc32c(~0u, sb->s_uuid, sizeof sb->s_uuid);
    return 0;
}

/* The fields only a version-2 superblock has must be 0 in a version-1 one,
 * and an internal journal has at most one user (e2fsck: "clear the v2
 * fields", "journal for multiple file systems"): either means the journal
 * superblock is not what it claims, and nothing of that log is trusted. */
static int check_version_fields(struct journal *journal, const struct jbd2_superblock *sb)
{
    uint32_t users = jbd2_be32(sb->s_nr_users);
    if (journal->version == 1 && (sb->s_feature_compat != 0 || sb->s_feature_incompat != 0 ||
                                  sb->s_feature_ro_compat != 0 || users != 0))
        return refuse(journal, -E_CORRUPT,
                      "the journal superblock is version 1 but carries version-2 fields");
    if (journal->version == 2 && users > 1)
        return refuse(journal, -E_CORRUPT,
                      "the journal superblock names more than one file system using it");
    return 0;
}

static int check_features(struct journal *journal, const struct jbd2_superblock *sb)
{
    journal->version = jbd2_be32(sb->s_header.h_blocktype) == JBD2_SUPERBLOCK_V2 ? 2 : 1;
    journal->tag_bytes = 8;
    journal->checksum_v1 = false;
    journal->checksum_version = 0;
    journal->tail_bytes = 0;
    int status = check_version_fields(journal, sb);
    if (status < 0 || journal->version == 1)
        return status;
    journal->compat = jbd2_be32(sb->s_feature_compat);
    journal->incompat = jbd2_be32(sb->s_feature_incompat);
    journal->ro_compat = jbd2_be32(sb->s_feature_ro_compat);
    memcpy(journal->uuid, sb->s_uuid, sizeof journal->uuid);
    if (journal->incompat & (JBD2_FEATURE_INCOMPAT_CSUM_V2 | JBD2_FEATURE_INCOMPAT_CSUM_V3)) {
        if (!ext2_has_unknown_ro_features(journal->fs))
            return refuse(journal, -E_INVALID,
                          "journal checksums (csum v2/v3) on a writable "
                          "file system are not supported");
        status = check_block_checksums(journal, sb);
        if (status < 0)
            return status;
    }
    journal->checksum_v1 = (journal->compat & JBD2_FEATURE_COMPAT_CHECKSUM) != 0;
    if (journal->incompat & JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT)
        return refuse(journal, -E_INVALID, "asynchronous journal commits are not supported");
    if (journal->incompat & JBD2_FEATURE_INCOMPAT_FAST_COMMIT)
        return refuse(journal, -E_INVALID, "fast commits are not supported");
    if ((journal->incompat & ~SUPPORTED_INCOMPAT) || journal->ro_compat)
        return refuse(journal, -E_INVALID, "unknown journal features");
    bool wide = (journal->incompat & JBD2_FEATURE_INCOMPAT_64BIT) != 0;
    if (journal->checksum_version == 3)
        journal->tag_bytes = 16; /* journal_block_tag3_t */
    else if (journal->checksum_version == 2)
        journal->tag_bytes = wide ? 14 : 10; /* JBD2's journal_tag_bytes() */
    else if (wide)
        journal->tag_bytes = 12;
    return 0;
}

static int check_superblock(struct journal *journal, const struct jbd2_superblock *sb)
{
    uint32_t type = jbd2_be32(sb->s_header.h_blocktype);
    if (jbd2_be32(sb->s_header.h_magic) != JBD2_MAGIC ||
        (type != JBD2_SUPERBLOCK_V1 && type != JBD2_SUPERBLOCK_V2))
        return refuse(journal, -E_CORRUPT, "no journal superblock in inode 8");
    journal->block_size = jbd2_be32(sb->s_blocksize);
    journal->maxlen = jbd2_be32(sb->s_maxlen);
    journal->first = jbd2_be32(sb->s_first);
    journal->sequence = jbd2_be32(sb->s_sequence);
    journal->first_uncommitted = journal->sequence;
    journal->start = jbd2_be32(sb->s_start);
    uint64_t inode_blocks = ext2_inode_size(&journal->inode) / journal->fs->block_size;
    if (journal->block_size != journal->fs->block_size)
        return refuse(journal, -E_CORRUPT, "journal block size differs from the file system's");
    if (journal->maxlen > inode_blocks || journal->first == 0 ||
        journal->first + 8 > journal->maxlen)
        return refuse(journal, -E_CORRUPT, "journal length or first block out of range");
    if (journal->start != 0 &&
        (journal->start < journal->first || journal->start >= journal->maxlen))
        return refuse(journal, -E_CORRUPT, "journal start out of range");
    return check_features(journal, sb);
}

int journal_load(struct journal *journal, struct ext2_fs *fs, struct journal_lower lower)
{
    journal->fs = fs;
    journal->lower = lower;
    journal->problem = NULL;
    journal->maxlen = 0;
    if (superblock_word(fs, 0xE4) != 0)
        return refuse(journal, -E_INVALID, "external journal devices are not supported");
    uint32_t number = superblock_word(fs, 0xE0);
    if (number == 0 || number >= fs->first_inode)
        return refuse(journal, -E_CORRUPT, "no journal inode");
    int status = ext2_read_inode(fs, number, &journal->inode);
    if (status == 0)
        status = ext2_locate_inode(fs, number, &journal->inode_block, &journal->inode_offset);
    if (status < 0)
        return refuse(journal, status, "journal inode unreadable");
    if ((journal->inode.i_mode & EXT2_S_IFMT) != EXT2_S_IFREG ||
        ext2_inode_size(&journal->inode) < 1024u * 1024u / 4 || journal->inode.i_links_count == 0)
        return refuse(journal, -E_CORRUPT, "journal inode is not a journal");
    status =
        find_journal_blocks(journal, (uint32_t)(ext2_inode_size(&journal->inode) / fs->block_size));
    if (status < 0)
        return status;
    protect_journal_blocks(journal);
    uint8_t *block = journal->scratch;
    status = journal_read_log_block(journal, 0, block);
    if (status < 0)
        return refuse(journal, status, "journal superblock unreadable");
    return check_superblock(journal, (const struct jbd2_superblock *)block);
}

static void init_sets(struct journal *journal)
{
    block_set_init(&journal->transaction, journal->transaction_keys, journal->transaction_values,
                   JOURNAL_TRANSACTION_BLOCKS * 2);
    block_set_init(&journal->logged, journal->logged_keys, NULL, JOURNAL_LOGGED_CAPACITY * 2);
    block_set_init(&journal->freed, journal->freed_keys, NULL, JOURNAL_FREED_CAPACITY * 2);
    journal->transaction_blocks = 0;
    journal->revoke_count = 0;
    journal->freed_overflow = false;
}

int journal_start(struct journal *journal)
{
    struct ext2_fs *fs = journal->fs;
    protect_journal_blocks(journal);
    init_sets(journal);
    journal->head = journal->first;
    journal->next_tid = journal->sequence;
    journal->log_empty = true;
    if (journal->version == 2 && !(journal->incompat & JBD2_FEATURE_INCOMPAT_REVOKE) &&
        !ext2_has_unknown_ro_features(fs)) {
        journal->incompat |= JBD2_FEATURE_INCOMPAT_REVOKE; /* as Linux sets it at mount */
        int status = journal_write_superblock(journal);
        if (status < 0)
            return status;
    }
    fs->needs_recovery = false;
    fs->read_only = ext2_has_unknown_ro_features(fs) || fs->bad_blocks_unknown;
    fs->read_only_reason = fs->read_only ? fs->read_only_reason : NULL;
    if (!fs->read_only) {
        fs->superblock.s_feature_incompat |= EXT2_FEATURE_INCOMPAT_RECOVER;
        fs->superblock_dirty = true;
        int status = ext2_flush_superblock(fs);
        if (status == 0)
            status = journal_flush(journal);
        if (status < 0)
            return status;
    }
    journal_device_init(journal);
    fs->device = &journal->device;
    fs->mounted = true;
    return 0;
}

int journal_mount(struct journal *journal, struct ext2_fs *fs, struct journal_lower lower)
{
    journal->problem = NULL;
    memset(&journal->statistics, 0, sizeof journal->statistics); /* counts of this mount */
    int status = ext2_mount(fs, lower.device);
    if (status < 0 || !fs->has_journal)
        return status;
    fs->mounted = false; /* until journal_start: problems are reported, not written */
    status = journal_load(journal, fs, lower);
    if (status < 0)
        return status;
    if (journal->start != 0) {
        status = journal_replay(journal);
        if (status < 0)
            return status;
        status = ext2_mount(fs, lower.device); /* the superblock may have been replayed */
        if (status < 0)
            return status;
        fs->mounted = false;
    }
    return journal_start(journal);
}

int journal_mount_or_read_only(struct journal *journal, struct ext2_fs *fs,
                               struct journal_lower lower, bool *journal_refused)
{
    *journal_refused = false;
    int status = journal_mount(journal, fs, lower);
    if (status != -E_CORRUPT || journal->problem == NULL)
        return status;
    const char *problem = journal->problem;
    status = ext2_mount(fs, lower.device);
    journal->problem = problem;
    if (status < 0)
        return status;
    fs->read_only = true;
    fs->read_only_reason = "the journal is corrupt: not replayed, nothing written";
    fs->protected_count = 0;
    ext2_forget_checked_inodes(fs);
    *journal_refused = true;
    return 0;
}
