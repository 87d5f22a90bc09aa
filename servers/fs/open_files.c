/* open_files.c: FS's open-file table (open_files.h): adding, finding and
 * closing handles, the handles of one inode, and closing the handles of
 * processes that have ended. Pure logic: no system calls, no printing. */
#include "open_files.h"
#include <formica/errors.h>
#include <string.h>

#define SLOT_MASK ((1u << OPEN_FILE_SLOT_BITS) - 1)

_Static_assert(OPEN_FILES_MAX <= (1u << OPEN_FILE_SLOT_BITS), "slot numbers fit a handle");

void (*open_files_slot_changed)(const struct open_files *table, uint32_t slot);

static void tell(const struct open_files *table, const struct open_file *file)
{
    if (open_files_slot_changed != NULL)
        open_files_slot_changed(table, (uint32_t)(file - table->slots));
}

void open_files_init(struct open_files *table)
{
    memset(table, 0, sizeof *table);
    for (uint32_t i = 0; i < OPEN_FILES_MAX; i++)
        table->slots[i].generation = 1;
}

/* The slots all but init's account may fill. */
static uint32_t table_limit(uint32_t account)
{
    return account == OPEN_FILES_RESERVED_ACCOUNT ? OPEN_FILES_MAX
                                                  : OPEN_FILES_MAX - OPEN_FILES_RESERVE;
}

long open_files_room(const struct open_files *table, uint32_t owner, uint32_t account)
{
    if (owner == 0 || table->in_use >= table_limit(account))
        return -E_BUSY;
    /* With fewer handles in all than the smallest share, no share is full: no scan. */
    if (table->in_use < OPEN_FILES_PER_PROCESS)
        return 0;
    uint32_t of_owner = 0, of_account = 0;
    for (uint32_t i = 0; i < OPEN_FILES_MAX; i++) {
        const struct open_file *file = &table->slots[i];
        of_owner += file->owner == owner;
        of_account += file->owner != 0 && file->account == account;
    }
    if (of_owner >= OPEN_FILES_PER_PROCESS)
        return -E_BUSY;
    if (account != OPEN_FILES_RESERVED_ACCOUNT && of_account >= OPEN_FILES_PER_ACCOUNT)
        return -E_QUOTA;
    return 0;
}

long open_files_add(struct open_files *table, uint32_t owner, uint32_t account, uint32_t inode,
                    uint32_t flags, uint64_t *handle)
{
    long room = open_files_room(table, owner, account);
    if (room < 0)
        return room;
    for (uint32_t i = 0; i < OPEN_FILES_MAX; i++) {
        struct open_file *file = &table->slots[i];
        if (file->owner != 0)
            continue;
        file->owner = owner;
        file->account = account;
        file->inode = inode;
        file->flags = flags;
        table->in_use++;
        *handle = (uint64_t)file->generation << OPEN_FILE_SLOT_BITS | i;
        tell(table, file);
        return 0;
    }
    return -E_BUSY;
}

bool open_files_close(struct open_files *table, struct open_file *file)
{
    uint32_t inode = file->inode;
    bool unlinked = (file->flags & OPEN_FILE_UNLINKED) != 0;
    file->owner = 0;
    file->account = 0;
    file->inode = 0;
    file->flags = 0;
    file->generation = file->generation == UINT32_MAX ? 1 : file->generation + 1;
    table->in_use--;
    tell(table, file);
    return unlinked && open_files_count_inode(table, inode) == 0;
}

uint32_t open_files_count_inode(const struct open_files *table, uint32_t inode)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < OPEN_FILES_MAX; i++)
        count += table->slots[i].owner != 0 && table->slots[i].inode == inode;
    return count;
}

uint32_t open_files_mark_inode(struct open_files *table, uint32_t inode, uint32_t flag)
{
    uint32_t count = 0;
    for (uint32_t i = 0; i < OPEN_FILES_MAX; i++) {
        struct open_file *file = &table->slots[i];
        if (file->owner != 0 && file->inode == inode) {
            file->flags |= flag;
            count++;
            tell(table, file);
        }
    }
    return count;
}

uint32_t open_files_detach_directory(struct open_files *table, uint32_t inode)
{
    uint32_t count = open_files_mark_inode(table, inode, OPEN_FILE_REMOVED);
    for (uint32_t i = 0; i < OPEN_FILES_MAX && count > 0; i++) {
        struct open_file *file = &table->slots[i];
        if (file->owner != 0 && file->inode == inode) {
            file->inode = 0;
            tell(table, file);
        }
    }
    return count;
}

static bool is_alive(uint32_t pid, const uint32_t *alive, uint32_t count)
{
    uint32_t low = 0, high = count;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        if (alive[middle] == pid)
            return true;
        if (alive[middle] < pid)
            low = middle + 1;
        else
            high = middle;
    }
    return false;
}

uint32_t open_files_close_dead(struct open_files *table, const uint32_t *alive, uint32_t count,
                               void (*release)(void *context, uint32_t inode), void *context)
{
    uint32_t closed = 0;
    for (uint32_t i = 0; i < OPEN_FILES_MAX; i++) {
        struct open_file *file = &table->slots[i];
        if (file->owner == 0 || is_alive(file->owner, alive, count))
            continue;
        uint32_t inode = file->inode;
        if (open_files_close(table, file) && release != NULL)
            release(context, inode);
        closed++;
    }
    return closed;
}
