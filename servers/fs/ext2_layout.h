/* ext2_layout.h: the on-disk structures of ext2 revision 1 (superblock, group
 * descriptor, inode, directory entry) and their constants. Little-endian
 * fields are used as-is: Formica and its test hosts are x86-64. */
#pragma once
#include <stdint.h>

#define EXT2_SUPERBLOCK_OFFSET 1024
#define EXT2_SUPERBLOCK_SIZE 1024
#define EXT2_MAGIC 0xEF53
#define EXT2_BAD_BLOCKS_INODE 1 /* its blocks are the bad-block list */
#define EXT2_ROOT_INODE 2
#define EXT2_GOOD_OLD_REV 0
#define EXT2_DYNAMIC_REV 1
#define EXT2_GOOD_OLD_INODE_SIZE 128
#define EXT2_GOOD_OLD_FIRST_INODE 11
#define EXT2_DIRECT_BLOCKS 12
#define EXT2_SINGLE_INDIRECT 12
#define EXT2_DOUBLE_INDIRECT 13
#define EXT2_TRIPLE_INDIRECT 14
#define EXT2_BLOCK_POINTERS 15
#define EXT2_NAME_MAX 255

/* Feature flags. */
#define EXT2_FEATURE_INCOMPAT_FILETYPE 0x0002
#define EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER 0x0001
#define EXT2_FEATURE_RO_COMPAT_LARGE_FILE 0x0002
#define EXT2_FEATURE_COMPAT_HAS_JOURNAL 0x0004
#define EXT2_FEATURE_INCOMPAT_RECOVER 0x0004 /* ext3: the journal needs replaying */
#define EXT2_FEATURE_INCOMPAT_SUPPORTED                                                            \
    (EXT2_FEATURE_INCOMPAT_FILETYPE | EXT2_FEATURE_INCOMPAT_RECOVER)
#define EXT2_FEATURE_RO_COMPAT_SUPPORTED                                                           \
    (EXT2_FEATURE_RO_COMPAT_SPARSE_SUPER | EXT2_FEATURE_RO_COMPAT_LARGE_FILE)

/* s_state and s_errors (what to do when an inconsistency is found). */
#define EXT2_VALID_FS 0x0001
#define EXT2_ERROR_FS 0x0002
#define EXT2_ERRORS_CONTINUE 1
#define EXT2_ERRORS_RO 2
#define EXT2_ERRORS_PANIC 3

/* The ext4 error record in the superblock's tail (byte offsets in the
 * superblock, as e2fsprogs' struct ext2_super_block; dumpe2fs shows them). */
#define EXT2_SB_ERROR_COUNT 0x194
#define EXT2_SB_FIRST_ERROR_TIME 0x198
#define EXT2_SB_FIRST_ERROR_INODE 0x19C
#define EXT2_SB_FIRST_ERROR_BLOCK 0x1A0 /* 64 bits */
#define EXT2_SB_FIRST_ERROR_FUNCTION 0x1A8
#define EXT2_SB_LAST_ERROR_TIME 0x1CC
#define EXT2_SB_LAST_ERROR_INODE 0x1D0
#define EXT2_SB_LAST_ERROR_BLOCK 0x1D8 /* 64 bits */
#define EXT2_SB_LAST_ERROR_FUNCTION 0x1E0
#define EXT2_SB_ERROR_FUNCTION_LENGTH 32
#define EXT2_SB_FIRST_ERROR_CODE 0x27C
#define EXT2_SB_LAST_ERROR_CODE 0x27D
#define EXT2_ERROR_CODE_CORRUPTED 5 /* ext4's EXT4_ERR_EFSCORRUPTED */
#define EXT2_FEATURE_COMPAT_RESIZE_INODE 0x0010
#define EXT2_FEATURE_RO_COMPAT_HUGE_FILE 0x0008
#define EXT2_FEATURE_RO_COMPAT_GDT_CSUM 0x0010
#define EXT2_FEATURE_RO_COMPAT_METADATA_CSUM 0x0400
#define EXT2_BG_INODE_UNINIT 0x0001
#define EXT2_BG_BLOCK_UNINIT 0x0002
#define EXT2_BG_ITABLE_UNUSED_OFFSET 28 /* bg_itable_unused: bytes 28-29 of a descriptor */
#define EXT2_OSD2_BLOCKS_HIGH 0         /* i_osd2 (Linux): i_blocks' high 16 bits */
#define EXT2_OSD2_FILE_ACL_HIGH 2       /* i_osd2 (Linux): i_file_acl's high 16 bits */

/* Inode flags the library cares about: a hashed (htree) directory. */
#define EXT2_INDEX_FL 0x00001000

/* i_mode file types. */
#define EXT2_S_IFMT 0xF000
#define EXT2_S_ISVTX 01000 /* sticky directory: only an entry's owner removes it */
#define EXT2_S_IFSOCK 0xC000
#define EXT2_S_IFLNK 0xA000
#define EXT2_S_IFREG 0x8000
#define EXT2_S_IFBLK 0x6000
#define EXT2_S_IFDIR 0x4000
#define EXT2_S_IFCHR 0x2000
#define EXT2_S_IFIFO 0x1000

/* Directory entry file types (filetype feature). */
#define EXT2_FT_UNKNOWN 0
#define EXT2_FT_REG_FILE 1
#define EXT2_FT_DIR 2
#define EXT2_FT_CHRDEV 3
#define EXT2_FT_BLKDEV 4
#define EXT2_FT_FIFO 5
#define EXT2_FT_SOCK 6
#define EXT2_FT_SYMLINK 7

struct ext2_superblock {
    uint32_t s_inodes_count;
    uint32_t s_blocks_count;
    uint32_t s_r_blocks_count;
    uint32_t s_free_blocks_count;
    uint32_t s_free_inodes_count;
    uint32_t s_first_data_block;
    uint32_t s_log_block_size;
    uint32_t s_log_frag_size;
    uint32_t s_blocks_per_group;
    uint32_t s_frags_per_group;
    uint32_t s_inodes_per_group;
    uint32_t s_mtime;
    uint32_t s_wtime;
    uint16_t s_mnt_count;
    uint16_t s_max_mnt_count;
    uint16_t s_magic;
    uint16_t s_state;
    uint16_t s_errors;
    uint16_t s_minor_rev_level;
    uint32_t s_lastcheck;
    uint32_t s_checkinterval;
    uint32_t s_creator_os;
    uint32_t s_rev_level;
    uint16_t s_def_resuid;
    uint16_t s_def_resgid;
    /* EXT2_DYNAMIC_REV only. */
    uint32_t s_first_ino;
    uint16_t s_inode_size;
    uint16_t s_block_group_nr;
    uint32_t s_feature_compat;
    uint32_t s_feature_incompat;
    uint32_t s_feature_ro_compat;
    uint8_t s_uuid[16];
    char s_volume_name[16];
    char s_last_mounted[64];
    uint32_t s_algorithm_usage_bitmap;
    uint8_t s_prealloc_blocks;
    uint8_t s_prealloc_dir_blocks;
    uint16_t s_reserved_gdt_blocks;
    uint8_t s_rest[EXT2_SUPERBLOCK_SIZE - 208];
};
_Static_assert(sizeof(struct ext2_superblock) == EXT2_SUPERBLOCK_SIZE, "superblock size");

struct ext2_group_descriptor {
    uint32_t bg_block_bitmap;
    uint32_t bg_inode_bitmap;
    uint32_t bg_inode_table;
    uint16_t bg_free_blocks_count;
    uint16_t bg_free_inodes_count;
    uint16_t bg_used_dirs_count;
    uint16_t bg_flags;
    uint8_t bg_reserved[12];
};
_Static_assert(sizeof(struct ext2_group_descriptor) == 32, "group descriptor size");

struct ext2_inode {
    uint16_t i_mode;
    uint16_t i_uid;
    uint32_t i_size;
    uint32_t i_atime;
    uint32_t i_ctime;
    uint32_t i_mtime;
    uint32_t i_dtime;
    uint16_t i_gid;
    uint16_t i_links_count;
    uint32_t i_blocks; /* in 512-byte units, indirect blocks included */
    uint32_t i_flags;
    uint32_t i_osd1;
    uint32_t i_block[EXT2_BLOCK_POINTERS];
    uint32_t i_generation;
    uint32_t i_file_acl;
    uint32_t i_size_high; /* i_dir_acl: the size's high 32 bits for regular files */
    uint32_t i_faddr;
    uint8_t i_osd2[12];
    /* 256-byte inodes continue with these. */
    uint16_t i_extra_isize;
    uint16_t i_pad;
};
#define EXT2_INODE_CORE_SIZE 128
_Static_assert(sizeof(struct ext2_inode) == EXT2_INODE_CORE_SIZE + 4, "inode size");

struct ext2_directory_entry {
    uint32_t inode;
    uint16_t rec_len;
    uint8_t name_len;
    uint8_t file_type; /* high byte of name_len without the filetype feature */
    char name[];
};
#define EXT2_DIRECTORY_ENTRY_HEADER 8
