/* disk_quota.h: FS's disk quotas: how many 512-byte sectors each uid's
 * files hold (the sum of their inodes' i_blocks) and the one limit every
 * uid but root's and the servers' is held to. Pure logic: no system calls,
 * no printing (fs_quota.c connects it to the ext2 library and logs). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define DISK_QUOTA_USERS 512           /* uids holding blocks, tracked at once */
#define DISK_QUOTA_DEFAULT_PERCENT 50u /* of the data blocks, per uid */

struct disk_quota_user {
    uint32_t uid;
    bool in_use;
    uint64_t sectors; /* 512-byte units, as i_blocks */
};

struct disk_quota {
    uint64_t limit_sectors; /* each uid's (UINT64_MAX: none) */
    uint32_t untracked;     /* changes lost for want of an entry (then refused growth) */
    uint32_t last;          /* the entry found last: a file's blocks come one by one */
    struct disk_quota_user users[DISK_QUOTA_USERS];
};

/* No uid holds anything, and there is no limit yet. */
void disk_quota_init(struct disk_quota *quota);
/* Each uid may hold `percent` % of `data_sectors` (the sectors files can
 * have: those free plus those they hold). */
void disk_quota_set_limit(struct disk_quota *quota, uint64_t data_sectors, uint32_t percent);
/* Root and the servers' own users hold what they need (formica/users.h). */
bool disk_quota_exempt(uint32_t uid);
/* The sectors `uid` holds. */
uint64_t disk_quota_held(const struct disk_quota *quota, uint32_t uid);
/* `uid` holds `sectors` more (fewer when negative; never below 0). */
void disk_quota_change(struct disk_quota *quota, uint32_t uid, int64_t sectors);
/* 0 when `uid` may hold `sectors` more, else -E_NO_SPACE: past its limit,
 * or a uid with no entry to count it in. */
long disk_quota_may_grow(const struct disk_quota *quota, uint32_t uid, uint64_t sectors);
