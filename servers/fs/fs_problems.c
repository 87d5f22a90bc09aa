/* fs_problems.c: how FS tells of an inconsistent disk: a log line per problem
 * the ext2 library finds (rate-limited), a line when the file system goes
 * read-only and why, the error record committed to disk at once, and under
 * errors=panic FS stops serving the disk (it never stops the machine). */
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/log_limit.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

static struct log_limit problem_lines;

static void print_problem(void *context, const struct ext2_problem *problem)
{
    (void)context;
    uint64_t held_back = 0;
    if (!log_limit_allow(&problem_lines, 0, clock_microseconds(), &held_back))
        return;
    if (held_back > 0)
        printf("fs: (%lu more problem lines not shown)\n", (unsigned long)held_back);
    printf("fs: corrupt: %s (inode %u, block %lu, in %s)\n", problem->what, problem->inode,
           (unsigned long)problem->block, problem->function);
}

void fs_problems_attach(struct ext2_device *device)
{
    device->report_problem = print_problem;
    device->report_context = NULL;
}

/* As ext4 warns when the superblock records errors from before. */
static void report_recorded_errors(const struct ext2_fs *fs)
{
    if (!(fs->superblock.s_state & EXT2_ERROR_FS))
        return;
    uint32_t count;
    memcpy(&count, (const uint8_t *)&fs->superblock + EXT2_SB_ERROR_COUNT, sizeof count);
    printf("fs: the superblock records errors (%u since the last check); run e2fsck\n", count);
}

void fs_problems_report_mount(const struct fs_server *server)
{
    const struct ext2_fs *fs = &server->fs;
    report_recorded_errors(fs);
    if (!fs->read_only)
        return;
    printf("fs: mounted read-only: %s", fs->read_only_reason ? fs->read_only_reason : "?");
    uint32_t unknown =
        fs->superblock.s_feature_ro_compat & ~(uint32_t)EXT2_FEATURE_RO_COMPAT_SUPPORTED;
    if (unknown != 0)
        printf(" (ro_compat 0x%x)", unknown);
    printf("; writes get '%s'\n", error_text(-E_READ_ONLY));
}

static const char *policy_name(uint16_t policy)
{
    if (policy == EXT2_ERRORS_CONTINUE)
        return "continue";
    return policy == EXT2_ERRORS_PANIC ? "panic" : "remount-ro";
}

void fs_problems_settle(struct fs_server *server)
{
    struct ext2_fs *fs = &server->fs;
    server->problems_seen = fs->problems;
    if (!server->mounted || server->read_only_told || !fs->read_only)
        return;
    server->read_only_told = true;
    printf("fs: the file system is now read-only: %s; writes get '%s'\n",
           fs->read_only_reason ? fs->read_only_reason : "?", error_text(-E_READ_ONLY));
    fs_journal_fsync(server); /* the superblock's error record reaches the disk */
    if (!fs->stopped)
        return;
    printf("fs: errors=%s: FS stops serving the disk; every request will get '%s'\n",
           policy_name(fs->errors_policy), error_text(-E_CORRUPT));
    server->mounted = false;
    server->unmounted_error = -E_CORRUPT;
}
