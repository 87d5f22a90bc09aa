/* ext2_internal.h: helpers shared by the ext2 library's files (block I/O,
 * group descriptors, bitmaps, inodes, block mapping, directories). Not for
 * the FS server: it uses ext2.h only. */
#pragma once
#include <formica/errors.h>
#include <string.h>

#include "ext2.h"

/* Block I/O through the device; range-checked against the file system. */
int ext2_read_block(struct ext2_fs *fs, uint32_t block, void *buffer);
/* Part of a block: length bytes at offset (no whole-block copy for an inode
 * or a pointer). */
int ext2_read_bytes(struct ext2_fs *fs, uint32_t block, uint32_t offset, void *buffer,
                    uint32_t length);
int ext2_write_block(struct ext2_fs *fs, uint32_t block, const void *buffer);
/* Bytes of a file's contents (not metadata): through device->read_data. */
int ext2_read_data_bytes(struct ext2_fs *fs, uint32_t block, uint32_t offset, void *buffer,
                         uint32_t length);
/* A block of a file's contents (not metadata): through device->write_data. */
int ext2_write_data_block(struct ext2_fs *fs, uint32_t block, const void *buffer);
bool ext2_has_unknown_ro_features(const struct ext2_fs *fs);
bool ext2_block_in_range(const struct ext2_fs *fs, uint32_t block);
int ext2_flush_superblock(struct ext2_fs *fs);
int ext2_check_writable(const struct ext2_fs *fs);

/* The running operation (ext2_operation.c). Changing operations run between
 * begin and end; end gives back status, or -E_CORRUPT when an inconsistency
 * was found, after dropping every change the operation made (when status is
 * an error, too). Writes, frees and quota charges go through these. */
void ext2_operation_begin(struct ext2_fs *fs);
long ext2_operation_end(struct ext2_fs *fs, long status);
int ext2_operation_write(struct ext2_fs *fs, uint32_t block, const void *buffer);
/* True (and the bytes copied) when the running operation holds the block. */
bool ext2_operation_read(struct ext2_fs *fs, uint32_t block, uint32_t offset, void *buffer,
                         uint32_t length);
/* A block written in place as file data: a held copy of it goes. */
void ext2_operation_data_written(struct ext2_fs *fs, uint32_t block);
void ext2_operation_forget(struct ext2_fs *fs, uint32_t block);
/* A block just allocated: claimed when the operation ends. */
void ext2_operation_allocated(struct ext2_fs *fs, uint32_t block);
/* Whether the running operation freed the block (not to be reused in it). */
bool ext2_operation_freed(const struct ext2_fs *fs, uint32_t block);
void ext2_operation_charge(struct ext2_fs *fs, uint32_t uid, int64_t sectors);

/* Inconsistencies (ext2_error.c): reports the problem, records it in the
 * superblock and applies s_errors; returns -E_CORRUPT for the caller to pass up. */
int ext2_corrupt_at(struct ext2_fs *fs, const char *function, uint32_t inode, uint64_t block,
                    const char *what);
#define ext2_corrupt(fs, inode, block, what) ext2_corrupt_at(fs, __func__, inode, block, what)
uint16_t ext2_errors_policy_of(const struct ext2_superblock *superblock);
/* Copies the error record (s_state's error bit, the counts, the first and
 * last error) from `from` into `into`; whether it differed. */
bool ext2_copy_error_record(struct ext2_superblock *into, const struct ext2_superblock *from);

/* Metadata (ext2_metadata.c): whether a block holds a superblock or its
 * backup, group descriptors (reserved ones too), a bitmap, an inode table or
 * the journal: no file may point at it and no allocation may hand it out. */
bool ext2_is_metadata(const struct ext2_fs *fs, uint32_t block);
/* Whether the group's block bitmap marks all of the group's metadata in use
 * (checked once per mount per group); -E_CORRUPT (reported) if not. */
int ext2_verify_block_bitmap(struct ext2_fs *fs, uint32_t group, const uint8_t *bitmap);
/* The same for an inode bitmap: the reserved inodes must be marked in use. */
int ext2_verify_inode_bitmap(struct ext2_fs *fs, uint32_t group, const uint8_t *bitmap);
/* Checks the group descriptors' locations against each other and the
 * superblock's and descriptors' own blocks, and keeps them (at mount). */
int ext2_check_group_locations(struct ext2_fs *fs);
/* The group's backup superblock and descriptors: their first block and
 * how many (0 when the group has none). */
uint32_t ext2_group_super_blocks(const struct ext2_fs *fs, uint32_t group, uint32_t *first);

/* The bad-block list (ext2_bad_blocks.c): read at mount (a list FS cannot
 * read whole mounts read-only); whether a block is on it (inline: every
 * block pointer asks, and the list is almost always empty); whether an
 * inode lives in an inode-table block on it. */
int ext2_load_bad_blocks(struct ext2_fs *fs);
bool ext2_bad_block_listed(const struct ext2_fs *fs, uint32_t block);
static inline bool ext2_is_bad_block(const struct ext2_fs *fs, uint32_t block)
{
    return fs->bad_block_ranges != 0 && ext2_bad_block_listed(fs, block);
}
bool ext2_inode_in_bad_block(struct ext2_fs *fs, uint32_t number);
/* The claims (ext2_claims.c): whether a file claims the block, whether two
 * do, and the claim's change when an operation allocates or frees it. */
bool ext2_claimed(const struct ext2_fs *fs, uint32_t block);
bool ext2_claimed_twice(const struct ext2_fs *fs, uint32_t block);
void ext2_claims_set(struct ext2_fs *fs, uint32_t block, bool claimed);

/* The first block of the group's inode table (as checked at mount). */
int ext2_group_inode_table(struct ext2_fs *fs, uint32_t group, uint32_t *table);

/* Group descriptors (read and checked on every use). */
int ext2_read_group(struct ext2_fs *fs, uint32_t group, struct ext2_group_descriptor *descriptor);
/* A group's descriptor, then its block or inode bitmap (a block's bytes). */
enum ext2_bitmap { EXT2_BLOCK_BITMAP, EXT2_INODE_BITMAP };
int ext2_read_group_bitmap(struct ext2_fs *fs, uint32_t group, enum ext2_bitmap which,
                           struct ext2_group_descriptor *descriptor, uint8_t *bitmap);
int ext2_write_group(struct ext2_fs *fs, uint32_t group,
                     const struct ext2_group_descriptor *descriptor);
uint32_t ext2_group_first_block(const struct ext2_fs *fs, uint32_t group);
uint32_t ext2_group_block_count(const struct ext2_fs *fs, uint32_t group);

/* Bitmaps: allocation near a goal, and freeing. */
int ext2_allocate_block(struct ext2_fs *fs, uint32_t goal, uint32_t *block);
int ext2_free_block(struct ext2_fs *fs, uint32_t block);
int ext2_allocate_inode(struct ext2_fs *fs, uint32_t parent, bool directory, uint32_t *inode);
int ext2_free_inode(struct ext2_fs *fs, uint32_t inode, bool directory);

/* Ownership (ext2_permission.c). */
uint32_t ext2_inode_uid(const struct ext2_inode *inode);
uint32_t ext2_inode_gid(const struct ext2_inode *inode);
void ext2_set_owner(struct ext2_inode *inode, uint32_t uid, uint32_t gid);
int ext2_permit(const struct ext2_fs *fs, const struct ext2_inode *inode, uint32_t want);
/* Whether fs->user may remove `target`'s name from `directory` (write and
 * search there; in a sticky directory only the target's or its owner). */
int ext2_permit_removal(const struct ext2_fs *fs, const struct ext2_inode *directory,
                        const struct ext2_inode *target);

/* Disk quotas and the reserved blocks (ext2_quota.c). Whether `inode` may
 * take `blocks` more blocks: the reserved blocks (s_r_blocks_count) are
 * root's, and the inode's owner must stay within its quota (fs->quota).
 * 0 or -E_NO_SPACE. */
int ext2_quota_allows(struct ext2_fs *fs, const struct ext2_inode *inode, uint32_t blocks);
/* `inode`'s i_blocks changed by `sectors`: reported for its owner. */
void ext2_quota_charge(struct ext2_fs *fs, const struct ext2_inode *inode, int64_t sectors);

/* Inodes. ext2_read_inode checks what it reads (ext2_check_inode);
 * ext2_read_named_inode also refuses what a directory entry may not name
 * (a reserved inode, a free or deleted one). */
/* An inode about to change: the file system writable, then the inode read. */
int ext2_read_inode_to_change(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode);
/* Where inode `number` lies: its inode-table block and its offset there. */
int ext2_locate_inode(struct ext2_fs *fs, uint32_t number, uint32_t *block, uint32_t *offset);
int ext2_read_inode(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode);
int ext2_read_raw_inode(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode);
int ext2_check_inode(struct ext2_fs *fs, uint32_t number, const struct ext2_inode *inode);
/* Each next ext2_read_inode checks every pointer it reads, even if it passed before. */
void ext2_forget_checked_inodes(struct ext2_fs *fs);
int ext2_read_named_inode(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode);
int ext2_write_inode(struct ext2_fs *fs, uint32_t number, const struct ext2_inode *inode);
int ext2_initialize_inode(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode,
                          uint16_t mode);
uint64_t ext2_inode_size(const struct ext2_inode *inode);
void ext2_set_inode_size(struct ext2_fs *fs, struct ext2_inode *inode, uint64_t size);
bool ext2_is_directory(const struct ext2_inode *inode);
bool ext2_has_block_tree(const struct ext2_inode *inode);
int ext2_release_inode(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode);

/* Block mapping: logical block -> physical block (0 for a hole). */
/* The block tree's reach, capped by the 32-bit i_blocks (ext2_mount keeps it
 * in max_file_blocks; ext2_max_file_blocks reads it back). */
uint64_t ext2_largest_file_blocks(const struct ext2_fs *fs);
static inline uint64_t ext2_max_file_blocks(const struct ext2_fs *fs)
{
    return fs->max_file_blocks;
}
int ext2_map_block(struct ext2_fs *fs, struct ext2_inode *inode, uint64_t logical,
                   uint32_t *physical);
int ext2_map_block_create(struct ext2_fs *fs, struct ext2_inode *inode, uint64_t logical,
                          uint32_t goal, uint32_t *physical, bool *created);
/* Calls visit for every block of the tree (indirect ones with indirect
 * true) holding logical blocks below limit, checking each pointer; stops at
 * the first error, visit's or -E_CORRUPT. */
int ext2_visit_tree(struct ext2_fs *fs, const struct ext2_inode *inode, uint64_t limit,
                    int (*visit)(void *context, uint32_t block, bool indirect, uint64_t logical),
                    void *context);
/* ext2_visit_tree over the whole tree of inode 1, the bad-block list: its
 * indirect blocks are checked as any block pointer, its leaves only to lie
 * on the disk (a bad block may be metadata: a block of an inode table). */
int ext2_visit_bad_block_list(struct ext2_fs *fs, const struct ext2_inode *inode,
                              int (*visit)(void *context, uint32_t block, bool indirect,
                                           uint64_t logical),
                              void *context);
/* Checks the whole tree (ranges, loops) without changing anything. */
int ext2_check_block_tree(struct ext2_fs *fs, struct ext2_inode *inode);
int ext2_free_blocks_from(struct ext2_fs *fs, struct ext2_inode *inode, uint64_t first_logical);

/* Directories. */
struct ext2_entry_location {
    uint64_t logical; /* directory block holding the entry */
    uint32_t physical;
    uint32_t offset;   /* of the entry in the block */
    uint32_t previous; /* offset of the entry before it, or UINT32_MAX */
    uint32_t inode;
    uint8_t file_type;
};
/* Directory `number` (its inode read into `directory`): its first block's
 * "." must name it. */
int ext2_directory_find(struct ext2_fs *fs, uint32_t number, struct ext2_inode *directory,
                        const char *name, size_t name_length, struct ext2_entry_location *location);
int ext2_directory_add(struct ext2_fs *fs, uint32_t directory_number, struct ext2_inode *directory,
                       const char *name, size_t name_length, uint32_t inode, uint8_t file_type);
int ext2_directory_remove(struct ext2_fs *fs, const struct ext2_entry_location *location);
int ext2_directory_set_entry(struct ext2_fs *fs, const struct ext2_entry_location *location,
                             uint32_t inode, uint8_t file_type);
int ext2_directory_is_empty(struct ext2_fs *fs, uint32_t number, struct ext2_inode *directory);
int ext2_directory_initialize(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode,
                              uint32_t parent);
uint8_t ext2_file_type_of(const struct ext2_fs *fs, uint16_t mode);
