/* ext2_error.c: what the library does when it finds the disk inconsistent:
 * the problem is reported (fs->report_problem), recorded in the superblock as
 * ext4 records it (s_state's error bit, s_error_count, the first and last
 * error's time, inode, block and function) and s_errors is applied. */
#include "ext2_internal.h"

static void put_u32(struct ext2_fs *fs, uint32_t offset, uint32_t value)
{
    memcpy((uint8_t *)&fs->superblock + offset, &value, sizeof value);
}

static uint32_t get_u32(const struct ext2_fs *fs, uint32_t offset)
{
    uint32_t value;
    memcpy(&value, (const uint8_t *)&fs->superblock + offset, sizeof value);
    return value;
}

static void put_u64(struct ext2_fs *fs, uint32_t offset, uint64_t value)
{
    memcpy((uint8_t *)&fs->superblock + offset, &value, sizeof value);
}

static void put_function(struct ext2_fs *fs, uint32_t offset, const char *function)
{
    uint8_t *field = (uint8_t *)&fs->superblock + offset;
    memset(field, 0, EXT2_SB_ERROR_FUNCTION_LENGTH);
    size_t length = strnlen(function, EXT2_SB_ERROR_FUNCTION_LENGTH);
    memcpy(field, function, length);
}

/* As ext4's __ext4_error: the first error's fields are set once, the last
 * error's every time; the count saturates. */
static void record_in_superblock(struct ext2_fs *fs, const struct ext2_problem *problem)
{
    uint32_t time = fs->time != 0 ? fs->time : 1;
    fs->superblock.s_state |= EXT2_ERROR_FS;
    uint32_t count = get_u32(fs, EXT2_SB_ERROR_COUNT);
    if (count != UINT32_MAX)
        put_u32(fs, EXT2_SB_ERROR_COUNT, count + 1);
    if (get_u32(fs, EXT2_SB_FIRST_ERROR_TIME) == 0) {
        put_u32(fs, EXT2_SB_FIRST_ERROR_TIME, time);
        put_u32(fs, EXT2_SB_FIRST_ERROR_INODE, problem->inode);
        put_u64(fs, EXT2_SB_FIRST_ERROR_BLOCK, problem->block);
        put_function(fs, EXT2_SB_FIRST_ERROR_FUNCTION, problem->function);
        ((uint8_t *)&fs->superblock)[EXT2_SB_FIRST_ERROR_CODE] = EXT2_ERROR_CODE_CORRUPTED;
    }
    put_u32(fs, EXT2_SB_LAST_ERROR_TIME, time);
    put_u32(fs, EXT2_SB_LAST_ERROR_INODE, problem->inode);
    put_u64(fs, EXT2_SB_LAST_ERROR_BLOCK, problem->block);
    put_function(fs, EXT2_SB_LAST_ERROR_FUNCTION, problem->function);
    ((uint8_t *)&fs->superblock)[EXT2_SB_LAST_ERROR_CODE] = EXT2_ERROR_CODE_CORRUPTED;
    fs->superblock_dirty = true;
    ext2_flush_superblock(fs); /* a device error here leaves the record in memory */
}

/* errors=continue keeps writing (each bad operation still fails);
 * remount-ro and panic stop every write; panic also tells the caller to
 * stop serving (fs->stopped). */
static void apply_policy(struct ext2_fs *fs)
{
    if (fs->errors_policy == EXT2_ERRORS_CONTINUE)
        return;
    fs->read_only = true;
    fs->read_only_reason = fs->errors_policy == EXT2_ERRORS_PANIC
                               ? "an inconsistency was found (errors=panic: FS stops)"
                               : "an inconsistency was found (errors=remount-ro)";
    fs->stopped = fs->errors_policy == EXT2_ERRORS_PANIC;
}

int ext2_corrupt_at(struct ext2_fs *fs, const char *function, uint32_t inode, uint64_t block,
                    const char *what)
{
    struct ext2_problem problem = {function, what, inode, block};
    fs->problems++;
    if (fs->report_problem != NULL)
        fs->report_problem(fs->report_context, &problem);
    if (!fs->mounted || fs->read_only)
        return -E_CORRUPT; /* at mount, or read-only: nothing is written */
    record_in_superblock(fs, &problem);
    apply_policy(fs);
    return -E_CORRUPT;
}

uint16_t ext2_errors_policy_of(const struct ext2_superblock *superblock)
{
    uint16_t errors = superblock->s_errors;
    if (errors == EXT2_ERRORS_CONTINUE || errors == EXT2_ERRORS_PANIC)
        return errors;
    return EXT2_ERRORS_RO; /* as ext4: anything else is remount-ro */
}

/* The bytes of the error record: s_state, then ext4's error fields. */
static const struct {
    uint32_t offset, length;
} error_record[] = {
    {offsetof(struct ext2_superblock, s_state), sizeof(uint16_t)},
    {EXT2_SB_ERROR_COUNT,
     EXT2_SB_LAST_ERROR_FUNCTION + EXT2_SB_ERROR_FUNCTION_LENGTH - EXT2_SB_ERROR_COUNT},
    {EXT2_SB_FIRST_ERROR_CODE, 2},
};

bool ext2_copy_error_record(struct ext2_superblock *into, const struct ext2_superblock *from)
{
    bool differed = false;
    for (size_t i = 0; i < sizeof error_record / sizeof error_record[0]; i++) {
        uint8_t *to = (uint8_t *)into + error_record[i].offset;
        const uint8_t *source = (const uint8_t *)from + error_record[i].offset;
        differed |= memcmp(to, source, error_record[i].length) != 0;
        memcpy(to, source, error_record[i].length);
    }
    return differed;
}
