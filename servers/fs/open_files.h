/* open_files.h: FS's open-file table: which process holds which handle on
 * which inode, with what access. One fixed-size structure with no pointers,
 * so that it can later live in memory that survives an FS restart. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OPEN_FILES_MAX 2048        /* handles of all processes together */
#define OPEN_FILES_PER_PROCESS 128 /* one process's share */
/* One quota account's share (the kernel-stamped sender_account): a quarter
 * of the table, so one account's processes cannot take every handle. */
#define OPEN_FILES_PER_ACCOUNT (OPEN_FILES_MAX / 4)
/* The table's last slots are init's account's alone (init, the servers, the
 * shell): other accounts together fill at most OPEN_FILES_MAX minus this. */
#define OPEN_FILES_RESERVE 256
#define OPEN_FILES_RESERVED_ACCOUNT 1 /* init's account: the pid that founded it */

/* open_file.flags */
#define OPEN_FILE_READ 1u      /* opened for reading */
#define OPEN_FILE_WRITE 2u     /* opened for writing */
#define OPEN_FILE_DIRECTORY 4u /* the inode is a directory */
#define OPEN_FILE_UNLINKED 8u  /* a file whose last name went: freed at its last close */
#define OPEN_FILE_REMOVED 16u  /* a directory removed while open: reads as empty, inode 0 */

/* A handle is generation << OPEN_FILE_SLOT_BITS | slot: a closed handle's
 * slot gets a new generation, so the old handle never names it again. */
#define OPEN_FILE_SLOT_BITS 16

struct open_file {
    uint32_t owner;   /* the pid holding it; 0: the slot is free */
    uint32_t account; /* the owner's quota account, for the account's share */
    uint32_t inode;
    uint32_t generation; /* never 0 */
    uint32_t flags;      /* OPEN_FILE_* */
};

struct open_files {
    uint32_t in_use;
    struct open_file slots[OPEN_FILES_MAX];
};

void open_files_init(struct open_files *table);

/* Told of every slot a change of any table touched, after the change (FS's
 * owner mirrors its table for its replicas, open_files_mirror.h); NULL:
 * nobody is told. */
extern void (*open_files_slot_changed)(const struct open_files *table, uint32_t slot);

/* Whether `owner` of `account` may open one more handle: 0, or -E_BUSY
 * (the process's share or the table is full: for accounts but init's, the
 * table less its reserve), or -E_QUOTA (the account's share is full). */
long open_files_room(const struct open_files *table, uint32_t owner, uint32_t account);
/* A new handle of `owner` (of `account`) on `inode`; open_files_room's
 * error when there is no room. */
long open_files_add(struct open_files *table, uint32_t owner, uint32_t account, uint32_t inode,
                    uint32_t flags, uint64_t *handle);
/* The entry `handle` names if `owner` holds it, else NULL (forged, closed,
 * another process's). Inline: every request on a handle asks. */
static inline struct open_file *open_files_find(struct open_files *table, uint32_t owner,
                                                uint64_t handle)
{
    uint64_t slot = handle & ((1u << OPEN_FILE_SLOT_BITS) - 1);
    uint64_t generation = handle >> OPEN_FILE_SLOT_BITS;
    if (owner == 0 || slot >= OPEN_FILES_MAX)
        return NULL;
    struct open_file *file = &table->slots[slot];
    if (file->owner != owner || file->generation != generation)
        return NULL;
    return file;
}
/* Frees the entry. True when it was the last handle of an unlinked file,
 * whose inode the caller must now free. */
bool open_files_close(struct open_files *table, struct open_file *file);

/* How many handles name `inode`. */
uint32_t open_files_count_inode(const struct open_files *table, uint32_t inode);
/* Sets `flag` on every handle of `inode`; how many there were. */
uint32_t open_files_mark_inode(struct open_files *table, uint32_t inode, uint32_t flag);
/* A directory removed while open: its handles get OPEN_FILE_REMOVED and name
 * no inode any more (the number may go to a new file). How many there were. */
uint32_t open_files_detach_directory(struct open_files *table, uint32_t inode);

/* Closes every handle whose owner is not in `alive` (sorted ascending, count
 * pids); for each unlinked file whose last handle goes, calls
 * release(context, inode). Returns the handles closed. */
uint32_t open_files_close_dead(struct open_files *table, const uint32_t *alive, uint32_t count,
                               void (*release)(void *context, uint32_t inode), void *context);
