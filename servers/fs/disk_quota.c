/* disk_quota.c: FS's per-uid block counts and their limit (disk_quota.h):
 * a small open table of uids, entries freed when a uid holds nothing. */
#include "disk_quota.h"
#include <formica/errors.h>
#include <formica/users.h>
#include <string.h>

void disk_quota_init(struct disk_quota *quota)
{
    memset(quota, 0, sizeof *quota);
    quota->limit_sectors = UINT64_MAX;
}

void disk_quota_set_limit(struct disk_quota *quota, uint64_t data_sectors, uint32_t percent)
{
    if (percent > 100)
        percent = 100;
    quota->limit_sectors = data_sectors / 100 * percent + data_sectors % 100 * percent / 100;
}

bool disk_quota_exempt(uint32_t uid)
{
    return uid == USER_ROOT || (uid >= USER_FS && uid <= USER_PAGER);
}

static struct disk_quota_user *entry_of(const struct disk_quota *quota, uint32_t uid)
{
    const struct disk_quota_user *last = &quota->users[quota->last];
    if (last->in_use && last->uid == uid)
        return (struct disk_quota_user *)last;
    for (uint32_t i = 0; i < DISK_QUOTA_USERS; i++) {
        const struct disk_quota_user *user = &quota->users[i];
        if (user->in_use && user->uid == uid)
            return (struct disk_quota_user *)user;
    }
    return NULL;
}

static struct disk_quota_user *new_entry(struct disk_quota *quota, uint32_t uid)
{
    for (uint32_t i = 0; i < DISK_QUOTA_USERS; i++) {
        struct disk_quota_user *user = &quota->users[i];
        if (!user->in_use) {
            *user = (struct disk_quota_user){.uid = uid, .in_use = true};
            return user;
        }
    }
    return NULL;
}

uint64_t disk_quota_held(const struct disk_quota *quota, uint32_t uid)
{
    const struct disk_quota_user *user = entry_of(quota, uid);
    return user != NULL ? user->sectors : 0;
}

void disk_quota_change(struct disk_quota *quota, uint32_t uid, int64_t sectors)
{
    struct disk_quota_user *user = entry_of(quota, uid);
    if (user == NULL && sectors > 0)
        user = new_entry(quota, uid);
    if (user == NULL) {
        quota->untracked += sectors > 0;
        return;
    }
    quota->last = (uint32_t)(user - quota->users);
    if (sectors >= 0)
        user->sectors += (uint64_t)sectors;
    else
        user->sectors -= (uint64_t)-sectors > user->sectors ? user->sectors : (uint64_t)-sectors;
    if (user->sectors == 0)
        user->in_use = false; /* the entry goes to the next uid that needs one */
}

static bool has_free_entry(const struct disk_quota *quota)
{
    for (uint32_t i = 0; i < DISK_QUOTA_USERS; i++)
        if (!quota->users[i].in_use)
            return true;
    return false;
}

long disk_quota_may_grow(const struct disk_quota *quota, uint32_t uid, uint64_t sectors)
{
    if (disk_quota_exempt(uid))
        return 0;
    const struct disk_quota_user *user = entry_of(quota, uid);
    if (user == NULL && !has_free_entry(quota))
        return -E_NO_SPACE; /* it could not be counted */
    uint64_t held = user != NULL ? user->sectors : 0;
    if (held > quota->limit_sectors || sectors > quota->limit_sectors - held)
        return -E_NO_SPACE;
    return 0;
}
