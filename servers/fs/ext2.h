/* ext2.h: the ext2 (revision 1) library the FS server runs: mount, path
 * lookup, stat, read, write, truncate, create, mkdir, unlink, rmdir, rename,
 * readdir. Freestanding, no allocation; blocks go through a caller's device. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ext2_layout.h"

#define EXT2_MAX_BLOCK_SIZE 4096
#define EXT2_PATH_MAX 4096

/* An inconsistency found on disk (ext2_error.c): the library function that
 * found it, what is wrong, and the inode and block concerned (0: none). */
struct ext2_problem {
    const char *function;
    const char *what;
    uint32_t inode;
    uint64_t block;
};

/* The caller's block device. Block numbers are file-system blocks of
 * block_size bytes; the library sets block_size (1024 while it reads the
 * superblock in ext2_mount, then the file system's block size), and the
 * callbacks read it through their context. Both return 0 or a negative E_*
 * code. Writes are expected to reach the caller's cache or disk at once
 * (the library is write-through; syncing the cache is the caller's business). */
struct ext2_device {
    void *context;
    uint32_t block_size;
    /* The disk's size in bytes, 0 when unknown: ext2_mount refuses a file
     * system that does not fit (as Linux refuses the mount) and names an
     * image too small to hold a superblock. */
    uint64_t size_bytes;
    /* length bytes at offset within the block (offset + length <= block_size) */
    int (*read_bytes)(void *context, uint64_t block, uint32_t offset, void *buffer,
                      uint32_t length);
    int (*write_block)(void *context, uint64_t block, const void *buffer);
    /* Optional (NULL: write_block is used): a block of a file's contents,
     * which a journal in ordered mode writes in place instead of logging. */
    int (*write_data)(void *context, uint64_t block, const void *buffer);
    /* Optional (NULL: read_bytes is used): bytes of a file's contents, which
     * an FS replica reads without keeping a copy (docs/storage.md). */
    int (*read_data)(void *context, uint64_t block, uint32_t offset, void *buffer, uint32_t length);
    /* Optional: the block was just freed (a journal revokes its log copies). */
    void (*forget)(void *context, uint64_t block);
    /* Optional: false while a free block must not be reused yet (a journal:
     * freed by a transaction that has not committed). */
    bool (*may_allocate)(void *context, uint64_t block);
    /* Optional: told of each inconsistency found (ext2_error.c); ext2_mount
     * copies it into the file system (fs->report_problem). */
    void (*report_problem)(void *context, const struct ext2_problem *problem);
    void *report_context;
};

/* Blocks no file may own and no allocation may hand out besides the ones a
 * group descriptor names: the journal's (set by journal.h's mount). */
#define EXT2_PROTECTED_RANGES 32
struct ext2_block_range {
    uint32_t first;
    uint32_t count;
};

/* Where a group's bitmaps and inode table lie, checked at mount and kept
 * (they never move) for the first EXT2_KNOWN_GROUPS groups. */
#define EXT2_KNOWN_GROUPS 128
struct ext2_group_location {
    uint32_t block_bitmap;
    uint32_t inode_bitmap;
    uint32_t inode_table;
};

/* The bad-block list (inode 1) as runs of blocks, read at mount. */
#define EXT2_BAD_BLOCK_RANGES 64

/* The blocks the files claim (ext2_claims.c): a caller's bitmap, and the
 * blocks two files claim. */
#define EXT2_TWICE_CLAIMED_RANGES 64
struct ext2_claims {
    uint8_t *bits;         /* NULL: not kept (no scan yet, or no room given) */
    uint64_t blocks;       /* the blocks the bits cover, from block 0 */
    bool partial;          /* the scan was cut short: some claims are not known */
    uint64_t claimed;      /* blocks claimed at the scan */
    uint64_t twice_blocks; /* blocks two inodes claimed at the scan */
    bool twice_overflow;   /* more runs of them than the list keeps */
    uint32_t twice_ranges;
    struct ext2_block_range twice[EXT2_TWICE_CLAIMED_RANGES];
};

/* The running operation's changes, held until it ends (ext2_operation.c). */
#define EXT2_OPERATION_BLOCKS 32 /* metadata blocks it may change */
#define EXT2_OPERATION_RANGES 64 /* runs of blocks it may free, and allocate */
#define EXT2_OPERATION_CHARGES 8 /* owners whose quota it may charge */
struct ext2_charge {
    uint32_t uid;
    int64_t sectors;
};
struct ext2_operation {
    uint32_t depth; /* 0: none runs (writes go to the device at once) */
    uint64_t problems_at_start;
    bool spilled;                      /* more than it could hold went to the device: not undone */
    int device_error;                  /* the first device error of a spill */
    struct ext2_superblock superblock; /* as it was at the start */
    bool superblock_dirty;
    uint32_t held;
    uint32_t numbers[EXT2_OPERATION_BLOCKS];
    uint32_t freed_ranges;
    struct ext2_block_range freed[EXT2_OPERATION_RANGES];
    uint32_t allocated_ranges; /* claimed when it ends (fs->claims) */
    struct ext2_block_range allocated[EXT2_OPERATION_RANGES];
    uint32_t charges;
    struct ext2_charge charged[EXT2_OPERATION_CHARGES];
    uint8_t blocks[EXT2_OPERATION_BLOCKS][EXT2_MAX_BLOCK_SIZE];
};

/* A mounted file system (caller-provided storage; no pointers to free). */
/* Who a request acts for (Unix user and group). */
struct ext2_user {
    uint32_t uid;
    uint32_t gid;
};
#define EXT2_ROOT_USER 0
/* What a permission check asks for: the mode's rwx bits. */
#define EXT2_MAY_READ 4u
#define EXT2_MAY_WRITE 2u
#define EXT2_MAY_EXECUTE 1u /* search, for a directory */

/* Disk quotas (optional, set by the caller after ext2_mount; ext2_quota.c):
 * every change of an inode's i_blocks (512-byte units) is reported for the
 * inode's owner, and growth is asked first. */
struct ext2_quota {
    /* 0 when `uid` may hold `sectors` more, else -E_NO_SPACE. */
    int (*may_grow)(void *context, uint32_t uid, uint64_t sectors);
    /* `uid` holds `sectors` more (or fewer, when negative). */
    void (*changed)(void *context, uint32_t uid, int64_t sectors);
    void *context;
};

#define EXT2_CHECKED_INODES 8

struct ext2_checked_inode {
    uint32_t number;
    uint32_t pointers[EXT2_BLOCK_POINTERS + 1]; /* i_block[], then i_file_acl */
};

struct ext2_fs {
    struct ext2_device *device;
    struct ext2_superblock superblock; /* the primary copy, kept current */
    uint32_t block_size;
    uint32_t pointers_per_block; /* block numbers in an indirect block */
    uint64_t max_file_blocks;    /* the largest file's blocks (set at mount) */
    uint32_t group_count;
    uint32_t descriptors_per_block;
    uint32_t inode_size;
    uint32_t inodes_per_block;
    uint32_t inode_table_blocks;  /* per group */
    uint32_t first_inode;         /* first non-reserved inode */
    bool filetype;                /* directory entries carry a file type */
    bool read_only;               /* unknown RO_COMPAT features or needs_recovery: no writes */
    const char *read_only_reason; /* why, when read_only (for the log) */
    bool has_journal;             /* COMPAT has_journal: ext3 (servers/fs/journal.h) */
    bool needs_recovery;          /* INCOMPAT recover: the journal must be replayed first */
    bool superblock_dirty;
    uint32_t time; /* seconds since 1970 for timestamps; the caller may update it */
    /* The user the library acts for: the caller sets it for each request
     * (FS: the request's kernel-stamped sender_uid/gid). It owns what is
     * created, and path steps, removals and mode changes are checked against
     * it (ext2_permission.c). 0 after ext2_mount: root, which passes. */
    struct ext2_user user;
    /* Optional, set by the caller after ext2_mount: called when an inode's
     * last name goes (unlink, rmdir, rename over it). Returning true keeps a
     * regular file's inode and blocks (links 0) because it is still open;
     * the caller frees it later with ext2_release_unlinked. A directory is
     * freed whatever it returns. */
    bool (*last_name_gone)(void *context, uint32_t inode, bool directory);
    void *last_name_context;
    struct ext2_quota quota; /* all NULL after ext2_mount: no quotas */
    /* Inconsistencies (ext2_error.c); report_problem is the device's. */
    void (*report_problem)(void *context, const struct ext2_problem *problem);
    void *report_context;
    uint64_t problems;      /* found since mount */
    uint16_t errors_policy; /* s_errors: EXT2_ERRORS_CONTINUE, _RO or _PANIC */
    bool stopped;           /* errors=panic hit: the caller serves nothing more */
    bool mounted;           /* ext2_mount finished (problems are then recorded on disk) */
    /* Metadata every block pointer and allocation is checked against. */
    uint32_t descriptor_blocks; /* group descriptor table blocks */
    struct ext2_group_location groups[EXT2_KNOWN_GROUPS];
    uint8_t verified_bitmaps[EXT2_KNOWN_GROUPS]; /* 1: block, 2: inode bitmap checked */
    uint32_t root_blocks[EXT2_BLOCK_POINTERS];   /* root's top-level blocks at mount */
    struct ext2_block_range protected_ranges[EXT2_PROTECTED_RANGES];
    uint32_t protected_count;
    /* The block pointers of inodes whose pointers passed the checks, one
     * entry for each inode number modulo EXT2_CHECKED_INODES (number 0:
     * none): the same pointers read again pass again, unchecked (a mapped
     * file's every fault reads its inode, whose times change more often than
     * its pointers). Forgotten (ext2_forget_checked_inodes) when what they
     * are checked against changes: the protected ranges, the bad-block list. */
    struct ext2_checked_inode checked_inodes[EXT2_CHECKED_INODES];
    /* Inode 1's blocks (the bad blocks and the blocks holding their list):
     * never handed out nor named by a file (ext2_bad_blocks.c). */
    struct ext2_block_range bad_blocks[EXT2_BAD_BLOCK_RANGES];
    uint32_t bad_block_ranges;
    bool bad_blocks_unknown; /* the list could not be read whole: read-only */
    /* The operation running now: its metadata writes and frees are held
     * until it ends, and dropped if it fails or finds an inconsistency. */
    struct ext2_operation operation;
    uint64_t operation_aborts; /* operations that left nothing on the disk */
    struct ext2_claims claims; /* set by ext2_claims_scan after mount */
    uint64_t operation_spills; /* operations too large to hold whole */
};

struct ext2_stat {
    uint32_t inode;
    uint16_t mode;
    uint16_t links;
    uint32_t uid;
    uint32_t gid;
    uint64_t size;
    uint64_t blocks; /* 512-byte units, as i_blocks */
    uint32_t atime;
    uint32_t mtime;
    uint32_t ctime;
};

struct ext2_dirent {
    uint32_t inode;
    uint8_t file_type; /* EXT2_FT_*, or EXT2_FT_UNKNOWN without the feature */
    uint8_t name_length;
    char name[EXT2_NAME_MAX + 1]; /* NUL-terminated */
};

/* Reads and checks the superblock and every group descriptor. Returns 0,
 * -E_CORRUPT (bad magic, counts, descriptors), -E_INVALID (an unsupported
 * revision, block size or INCOMPAT feature) or the device's error. Unknown
 * RO_COMPAT features mount read-only (writes then return -E_READ_ONLY and
 * read_only_reason says why), and so does a journal that needs recovery
 * until journal_mount replays it. */
int ext2_mount(struct ext2_fs *fs, struct ext2_device *device);

/* Path lookup from the root ("/a/b", "a/./b/../c"; symbolic links are not
 * followed). Returns 0 and *inode, -E_NOT_FOUND, -E_NOT_DIRECTORY,
 * -E_NAME_TOO_LONG (a component over 255 bytes), -E_TOO_BIG (path over
 * EXT2_PATH_MAX) or -E_CORRUPT. */
int ext2_lookup(struct ext2_fs *fs, const char *path, uint32_t *inode);
int ext2_stat(struct ext2_fs *fs, uint32_t inode, struct ext2_stat *stat);
/* Whether fs->user may have `want` (EXT2_MAY_*) of a file with this mode and
 * owner: 0 or -E_PERMISSION. */
int ext2_permit_mode(const struct ext2_fs *fs, uint16_t mode, uint32_t uid, uint32_t gid,
                     uint32_t want);
/* chmod (the owner or root) and chown (root only): -E_PERMISSION otherwise. */
int ext2_change_mode(struct ext2_fs *fs, uint32_t inode, uint16_t mode);
int ext2_change_owner(struct ext2_fs *fs, uint32_t inode, uint32_t uid, uint32_t gid);

/* Reads up to length bytes at offset; returns the count (0 at or past the
 * end) or a negative error. Holes read as zeros. */
long ext2_read(struct ext2_fs *fs, uint32_t inode, uint64_t offset, void *buffer, size_t length);
/* Writes length bytes at offset, extending the file (a gap becomes a hole).
 * Returns the count written; fewer than length when the disk fills, and
 * -E_NO_SPACE when nothing could be written. */
long ext2_write(struct ext2_fs *fs, uint32_t inode, uint64_t offset, const void *buffer,
                size_t length);
/* Sets a regular file's size, freeing blocks past it or leaving a hole. */
int ext2_truncate(struct ext2_fs *fs, uint32_t inode, uint64_t size);

/* Namespace operations on paths from the root. mode's permission bits are
 * used (the type comes from the call). */
int ext2_create(struct ext2_fs *fs, const char *path, uint16_t mode, uint32_t *inode);
int ext2_mkdir(struct ext2_fs *fs, const char *path, uint16_t mode, uint32_t *inode);
int ext2_unlink(struct ext2_fs *fs, const char *path); /* not directories */
int ext2_rmdir(struct ext2_fs *fs, const char *path);  /* empty directories */
/* Moves old_path to new_path, replacing a file there (or an empty directory
 * when old_path is a directory). */
int ext2_rename(struct ext2_fs *fs, const char *old_path, const char *new_path);

/* Frees a regular file kept by last_name_gone (links 0): its blocks, then
 * the inode. 0 if it still has a name (nothing to do), or an error. */
int ext2_release_unlinked(struct ext2_fs *fs, uint32_t inode);

/* Disk quotas (ext2_quota.c). Calls visit(context, uid, sectors) for each
 * allocated inode (by the inode bitmaps: unlinked-but-open ones too) with
 * its owner and i_blocks: the sum per uid is what each uid holds. 0 or the
 * first error reading a bitmap or an inode. */
int ext2_quota_sum(struct ext2_fs *fs, void (*visit)(void *context, uint32_t uid, uint64_t sectors),
                   void *context);

/* Which blocks the files claim (ext2_claims.c), found once after mount in
 * the trees of the inodes the bitmaps mark in use, in `bits` (bytes * 8
 * blocks from block 0; the caller keeps it while mounted); from then on
 * freeing a block two files claim and handing out a block a file claims are
 * refused as the inconsistencies they are. 0, or a device error (then no
 * claims are kept). fs->claims says what the scan found. */
int ext2_claims_scan(struct ext2_fs *fs, uint8_t *bits, uint64_t bytes);

/* Whether `block` lies in a group's inode table (ext2_metadata.c). */
bool ext2_is_inode_table_block(const struct ext2_fs *fs, uint32_t block);
/* Whether `block`, an inode table block, went from `before` to `after`
 * (block_size bytes each) with only its inodes' times changed (access,
 * change, modification, their nanoseconds, creation): no inode's size or
 * block pointers moved (ext2_inode_times.c). False for any other block. */
bool ext2_only_inode_times_changed(const struct ext2_fs *fs, uint32_t block, const void *before,
                                   const void *after);

/* Directory iteration: *cursor starts at 0. Returns 1 and the next entry,
 * 0 at the end, or a negative error. Unused slots are skipped. */
int ext2_readdir(struct ext2_fs *fs, uint32_t directory, uint64_t *cursor,
                 struct ext2_dirent *entry);
