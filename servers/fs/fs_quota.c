/* fs_quota.c: FS's disk quotas at work: at mount each uid's holding is
 * summed from the inode table and the per-uid limit set (kernel option
 * fs_quota=PERCENT of the data blocks, default 50); then the ext2 library
 * asks before an inode grows and reports each change (ext2_quota.c), and a
 * growth past the limit is refused with a rate-limited log line. */
#include "disk_quota.h"
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/log_limit.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>

static struct disk_quota quota;

static int may_grow(void *context, uint32_t uid, uint64_t sectors)
{
    (void)context;
    long allowed = disk_quota_may_grow(&quota, uid, sectors);
    if (allowed == 0)
        return 0;
    static struct log_limit limit;
    uint64_t held_back = 0;
    if (!log_limit_allow(&limit, uid, clock_microseconds(), &held_back))
        return (int)allowed;
    if (held_back > 0)
        printf("fs: %lu more disk quota refusals of uid %u not shown\n", (unsigned long)held_back,
               uid);
    printf("fs: uid %u refused %lu KiB more: it holds %lu KiB of its %lu KiB disk quota\n", uid,
           (unsigned long)(sectors / 2), (unsigned long)(disk_quota_held(&quota, uid) / 2),
           (unsigned long)(quota.limit_sectors / 2));
    return (int)allowed;
}

static void changed(void *context, uint32_t uid, int64_t sectors)
{
    (void)context;
    disk_quota_change(&quota, uid, sectors);
}

struct mount_sum {
    uint64_t all_sectors;
};

static void count_inode(void *context, uint32_t uid, uint64_t sectors)
{
    struct mount_sum *sum = context;
    sum->all_sectors += sectors;
    disk_quota_change(&quota, uid, (int64_t)sectors);
}

/* The kernel option fs_quota=PERCENT (0 to 100), else the default. */
static uint32_t quota_percent(void)
{
    char value[16] = "";
    if (kernel_option("fs_quota", value, sizeof value) <= 0)
        return DISK_QUOTA_DEFAULT_PERCENT;
    char *end = NULL;
    unsigned long percent = strtoul(value, &end, 10);
    if (end != value && *end == '\0' && percent <= 100)
        return (uint32_t)percent;
    printf("fs: fs_quota=%s is not a percentage from 0 to 100; using %u\n", value,
           DISK_QUOTA_DEFAULT_PERCENT);
    return DISK_QUOTA_DEFAULT_PERCENT;
}

void fs_quota_start(struct fs_server *server)
{
    disk_quota_init(&quota);
    struct mount_sum sum = {0};
    int status = ext2_quota_sum(&server->fs, count_inode, &sum);
    if (status < 0) {
        printf("fs: disk quotas off: the inode table could not be summed (%s)\n",
               error_text(status));
        return;
    }
    uint32_t percent = quota_percent();
    uint64_t sectors_per_block = server->fs.block_size / 512;
    uint64_t data_sectors =
        sum.all_sectors + (uint64_t)server->fs.superblock.s_free_blocks_count * sectors_per_block;
    disk_quota_set_limit(&quota, data_sectors, percent);
    server->fs.quota = (struct ext2_quota){.may_grow = may_grow, .changed = changed};
    printf("fs: disk quota %lu KiB per user (%u%% of %lu KiB), %lu KiB reserved for root\n",
           (unsigned long)(quota.limit_sectors / 2), percent, (unsigned long)(data_sectors / 2),
           (unsigned long)(server->fs.superblock.s_r_blocks_count * sectors_per_block / 2));
    if (quota.untracked > 0)
        printf("fs: files of more than %u users: %u inodes not counted, their owners may not "
               "grow until an entry frees\n",
               DISK_QUOTA_USERS, quota.untracked);
}
