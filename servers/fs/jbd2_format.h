/* jbd2_format.h: the on-disk format of the JBD2 journal that ext3/ext4 keep
 * in inode 8: journal superblock (v1/v2), descriptor blocks with block tags,
 * commit and revoke blocks. Every field is big-endian on disk. */
#pragma once
#include <stdint.h>

#define JBD2_MAGIC 0xC03B3998u
#define JBD2_JOURNAL_INODE 8

/* Block types (jbd2_header.h_blocktype). */
#define JBD2_DESCRIPTOR_BLOCK 1u
#define JBD2_COMMIT_BLOCK 2u
#define JBD2_SUPERBLOCK_V1 3u
#define JBD2_SUPERBLOCK_V2 4u
#define JBD2_REVOKE_BLOCK 5u

/* Journal features (v2 superblock). */
#define JBD2_FEATURE_COMPAT_CHECKSUM 0x1u
#define JBD2_FEATURE_INCOMPAT_REVOKE 0x1u
#define JBD2_FEATURE_INCOMPAT_64BIT 0x2u
#define JBD2_FEATURE_INCOMPAT_ASYNC_COMMIT 0x4u
#define JBD2_FEATURE_INCOMPAT_CSUM_V2 0x8u
#define JBD2_FEATURE_INCOMPAT_CSUM_V3 0x10u
#define JBD2_FEATURE_INCOMPAT_FAST_COMMIT 0x20u

/* Block tag flags. */
#define JBD2_FLAG_ESCAPE 1u    /* the block began with JBD2_MAGIC: its first 4 bytes are zeroed */
#define JBD2_FLAG_SAME_UUID 2u /* no 16-byte UUID follows the tag */
#define JBD2_FLAG_DELETED 4u
#define JBD2_FLAG_LAST_TAG 8u

/* ext2/ext3 superblock feature bits for the journal. */
#define EXT3_FEATURE_COMPAT_HAS_JOURNAL 0x0004u
#define EXT3_FEATURE_INCOMPAT_RECOVER 0x0004u
#define EXT3_FEATURE_INCOMPAT_JOURNAL_DEV 0x0008u

struct jbd2_header {
    uint32_t h_magic;
    uint32_t h_blocktype;
    uint32_t h_sequence;
};
_Static_assert(sizeof(struct jbd2_header) == 12, "jbd2 header");

struct jbd2_superblock {
    struct jbd2_header s_header;
    uint32_t s_blocksize;
    uint32_t s_maxlen;   /* blocks in the journal */
    uint32_t s_first;    /* first block of log information */
    uint32_t s_sequence; /* first commit ID expected in the log */
    uint32_t s_start;    /* block of the log's start; 0: the journal is clean */
    uint32_t s_errno;
    /* v2 only. */
    uint32_t s_feature_compat;
    uint32_t s_feature_incompat;
    uint32_t s_feature_ro_compat;
    uint8_t s_uuid[16];
    uint32_t s_nr_users;
    uint32_t s_dynsuper;
    uint32_t s_max_transaction;
    uint32_t s_max_trans_data;
    uint8_t s_checksum_type;
    uint8_t s_padding2[3];
    uint32_t s_num_fc_blks;
    uint32_t s_padding[41];
    uint32_t s_checksum;
    uint8_t s_users[16 * 48];
};
_Static_assert(sizeof(struct jbd2_superblock) == 1024, "jbd2 superblock");

/* A tag without checksums: 8 bytes, or 12 with the 64bit feature
 * (t_blocknr_high). The first tag of a descriptor is followed by the
 * journal's 16-byte UUID unless JBD2_FLAG_SAME_UUID is set. */
struct jbd2_block_tag {
    uint32_t t_blocknr;
    uint16_t t_checksum; /* csum v2 only */
    uint16_t t_flags;
    uint32_t t_blocknr_high;
};

struct jbd2_commit_block {
    struct jbd2_header h;
    uint8_t h_chksum_type;
    uint8_t h_chksum_size;
    uint8_t h_padding[2];
    uint32_t h_chksum[8];
    uint64_t h_commit_sec;
    uint32_t h_commit_nsec;
};

struct jbd2_revoke_header {
    struct jbd2_header r_header;
    uint32_t r_count; /* bytes used in the block, this header included */
};
_Static_assert(sizeof(struct jbd2_revoke_header) == 16, "jbd2 revoke header");

static inline uint32_t jbd2_be32(uint32_t value)
{
    return __builtin_bswap32(value);
}

static inline uint16_t jbd2_be16(uint16_t value)
{
    return __builtin_bswap16(value);
}

static inline uint64_t jbd2_be64(uint64_t value)
{
    return __builtin_bswap64(value);
}
