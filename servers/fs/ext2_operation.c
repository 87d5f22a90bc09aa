/* ext2_operation.c: one operation's changes, held until it ends. Every
 * metadata block a changing operation (create, write, truncate, unlink,
 * rename, ...) writes is kept here, read back from here, and goes to the
 * device only when the operation succeeds; the blocks it frees are told to
 * the device (a journal's revokes) only then. An operation that fails, or
 * finds an inconsistency, is aborted: nothing of it reaches the disk (on
 * ext3 nothing of it joins the running transaction), the superblock and the
 * disk quotas go back to what they were, and only the error record stays. */
#include "ext2_internal.h"

static struct ext2_operation *running(struct ext2_fs *fs)
{
    return fs->operation.depth > 0 ? &fs->operation : NULL;
}

void ext2_operation_begin(struct ext2_fs *fs)
{
    struct ext2_operation *operation = &fs->operation;
    if (operation->depth++ > 0)
        return;
    operation->held = 0;
    operation->freed_ranges = 0;
    operation->allocated_ranges = 0;
    operation->charges = 0;
    operation->spilled = false;
    operation->device_error = 0;
    operation->problems_at_start = fs->problems;
    operation->superblock = fs->superblock;
    operation->superblock_dirty = fs->superblock_dirty;
}

static int held_slot(const struct ext2_operation *operation, uint32_t block)
{
    for (uint32_t i = 0; i < operation->held; i++)
        if (operation->numbers[i] == block)
            return (int)i;
    return -1;
}

bool ext2_operation_read(struct ext2_fs *fs, uint32_t block, uint32_t offset, void *buffer,
                         uint32_t length)
{
    const struct ext2_operation *operation = &fs->operation;
    int slot = held_slot(operation, block);
    if (slot < 0)
        return false;
    memcpy(buffer, operation->blocks[slot] + offset, length);
    return true;
}

static int write_to_device(struct ext2_fs *fs, uint32_t block, const void *buffer)
{
    int status = fs->device->write_block(fs->device->context, block, buffer);
    return status < 0 ? status : 0;
}

/* A run of blocks freed: no file claims them any more, and the device is
 * told (a journal keeps them from reuse until the commit, and revokes). */
static void release_freed(struct ext2_fs *fs, uint32_t first, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        ext2_claims_set(fs, first + i, false);
    if (fs->device->forget == NULL)
        return;
    for (uint32_t i = 0; i < count; i++)
        fs->device->forget(fs->device->context, first + i);
}

static void claim_range(struct ext2_fs *fs, uint32_t first, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        ext2_claims_set(fs, first + i, true);
}

/* A run of blocks appended to `ranges` (merged with the last when it goes
 * on); false when the list is full. */
static bool add_to_ranges(struct ext2_block_range *ranges, uint32_t *count, uint32_t block)
{
    struct ext2_block_range *last = *count > 0 ? &ranges[*count - 1] : NULL;
    if (last != NULL && last->first + last->count == block) {
        last->count++;
        return true;
    }
    if (*count == EXT2_OPERATION_RANGES)
        return false;
    ranges[(*count)++] = (struct ext2_block_range){block, 1};
    return true;
}

/* The held blocks to the device in the order first written, then the
 * frees (after the bitmaps that free them, so that a journal never lets a
 * block be reused before the transaction freeing it commits); the claims
 * follow: allocated blocks claimed, then freed ones (a block allocated and
 * given back by the same operation) no longer. */
static int release_held(struct ext2_fs *fs)
{
    struct ext2_operation *operation = &fs->operation;
    int status = 0;
    for (uint32_t i = 0; i < operation->held && status == 0; i++)
        status = write_to_device(fs, operation->numbers[i], operation->blocks[i]);
    for (uint32_t i = 0; i < operation->allocated_ranges; i++)
        claim_range(fs, operation->allocated[i].first, operation->allocated[i].count);
    for (uint32_t i = 0; i < operation->freed_ranges; i++)
        release_freed(fs, operation->freed[i].first, operation->freed[i].count);
    operation->held = 0;
    operation->freed_ranges = 0;
    operation->allocated_ranges = 0;
    return status;
}

/* More than the operation can hold: what it did so far goes to the device,
 * and from here on it cannot be undone (counted: no operation of the unit
 * tests gets here; a truncate of a file spread over more groups than that would). */
static int spill(struct ext2_fs *fs)
{
    fs->operation.spilled = true;
    fs->operation_spills++;
    return release_held(fs);
}

int ext2_operation_write(struct ext2_fs *fs, uint32_t block, const void *buffer)
{
    struct ext2_operation *operation = running(fs);
    if (operation == NULL)
        return write_to_device(fs, block, buffer);
    int slot = held_slot(operation, block);
    if (slot < 0 && operation->held == EXT2_OPERATION_BLOCKS) {
        int status = spill(fs);
        if (status < 0)
            return status;
    }
    if (slot < 0) {
        slot = (int)operation->held++;
        operation->numbers[slot] = block;
    }
    memcpy(operation->blocks[slot], buffer, fs->block_size);
    return 0;
}

void ext2_operation_data_written(struct ext2_fs *fs, uint32_t block)
{
    struct ext2_operation *operation = running(fs);
    int slot = operation != NULL ? held_slot(operation, block) : -1;
    if (slot < 0)
        return;
    uint32_t last = --operation->held; /* the data written in place is newer */
    operation->numbers[slot] = operation->numbers[last];
    memcpy(operation->blocks[slot], operation->blocks[last], fs->block_size);
}

/* A list of the operation is full: what it did so far goes to the device
 * (a device error then fails the operation). */
static void spill_for_room(struct ext2_fs *fs)
{
    int status = spill(fs);
    if (status < 0 && fs->operation.device_error == 0)
        fs->operation.device_error = status;
}

void ext2_operation_forget(struct ext2_fs *fs, uint32_t block)
{
    struct ext2_operation *operation = running(fs);
    if (operation == NULL) {
        release_freed(fs, block, 1);
        return;
    }
    if (!add_to_ranges(operation->freed, &operation->freed_ranges, block)) {
        spill_for_room(fs);
        add_to_ranges(operation->freed, &operation->freed_ranges, block);
    }
}

void ext2_operation_allocated(struct ext2_fs *fs, uint32_t block)
{
    struct ext2_operation *operation = running(fs);
    if (operation == NULL) {
        claim_range(fs, block, 1);
        return;
    }
    if (!add_to_ranges(operation->allocated, &operation->allocated_ranges, block)) {
        spill_for_room(fs);
        add_to_ranges(operation->allocated, &operation->allocated_ranges, block);
    }
}

bool ext2_operation_freed(const struct ext2_fs *fs, uint32_t block)
{
    const struct ext2_operation *operation = &fs->operation;
    if (operation->depth == 0)
        return false;
    for (uint32_t i = 0; i < operation->freed_ranges; i++)
        if (block >= operation->freed[i].first &&
            block - operation->freed[i].first < operation->freed[i].count)
            return true;
    return false;
}

void ext2_operation_charge(struct ext2_fs *fs, uint32_t uid, int64_t sectors)
{
    struct ext2_operation *operation = running(fs);
    if (operation == NULL)
        return;
    for (uint32_t i = 0; i < operation->charges; i++) {
        if (operation->charged[i].uid == uid) {
            operation->charged[i].sectors += sectors;
            return;
        }
    }
    if (operation->charges < EXT2_OPERATION_CHARGES)
        operation->charged[operation->charges++] = (struct ext2_charge){uid, sectors};
}

/* The operation leaves nothing: held blocks and frees dropped, the
 * superblock as it was (but for the error record of what was found), the
 * quotas given back; then the error record is written. */
static void abort_operation(struct ext2_fs *fs)
{
    struct ext2_operation *operation = &fs->operation;
    struct ext2_superblock found = fs->superblock;
    operation->held = 0;
    operation->freed_ranges = 0;
    operation->allocated_ranges = 0;
    fs->operation_aborts++;
    for (uint32_t i = 0; i < operation->charges && fs->quota.changed != NULL; i++)
        if (operation->charged[i].sectors != 0)
            fs->quota.changed(fs->quota.context, operation->charged[i].uid,
                              -operation->charged[i].sectors);
    fs->superblock = operation->superblock;
    fs->superblock_dirty = operation->superblock_dirty;
    if (ext2_copy_error_record(&fs->superblock, &found))
        fs->superblock_dirty = true;
    ext2_flush_superblock(fs); /* a device error leaves the record in memory */
}

long ext2_operation_end(struct ext2_fs *fs, long status)
{
    struct ext2_operation *operation = &fs->operation;
    if (operation->depth == 0 || --operation->depth > 0)
        return status;
    if (status >= 0 && operation->device_error < 0)
        status = operation->device_error;
    bool found_problem = fs->problems != operation->problems_at_start;
    if ((status < 0 || found_problem) && !operation->spilled) {
        abort_operation(fs);
        return status < 0 ? status : -E_CORRUPT;
    }
    /* Done, or spilled: past a spill the library's own order keeps the
     * disk consistent with what was done, as without the operation. */
    int released = release_held(fs);
    return released < 0 ? released : status;
}
