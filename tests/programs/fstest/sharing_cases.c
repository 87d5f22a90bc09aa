/* sharing_cases.c: fstest's cases between processes (fstest starts copies of
 * itself as `fstest child ACTION [HANDLE]`). A holds /fstest/shared open; B
 * unlinks it and creates /fstest/other; A's writes go to the unlinked file,
 * never into /fstest/other, until A's close frees it. B cannot use A's
 * handle. A child that ends holding an unlinked file has it freed by FS.
 * The host checks the disk afterwards (e2fsck -fn, debugfs). */
#include "cases.h"
#include "report.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHARED_BYTES 8192u
#define OTHER_BYTES 8192u
#define SEED_SHARED 4u
#define SEED_OTHER 5u
#define SEED_REWRITE 6u
#define SEED_REUSER 7u

static const uint32_t read_write_create =
    FS_OPEN_CREATE | FS_OPEN_TRUNCATE | FS_OPEN_READ | FS_OPEN_WRITE;

/* The inode of the last file create_file made. */
static uint32_t created_inode;

/* A new file of `bytes` of pattern `seed`; its handle, or an error. */
static long create_file(struct fs_link *link, const char *path, uint32_t seed, uint32_t bytes)
{
    long handle = fs_open_path(link, path, read_write_create);
    if (handle < 0)
        return handle;
    created_inode = fs_open_of(ica_control_of(link->control))->inode;
    fill_pattern(fs_data(link), seed, 0, bytes);
    long written = fs_write_at(link, (uint64_t)handle, 0, bytes);
    return written == (long)bytes ? handle : (written < 0 ? written : -E_IO);
}

/* Whether `path` holds exactly `bytes` of pattern `seed`. */
static bool file_holds(struct fs_link *link, const char *path, uint32_t seed, uint32_t bytes)
{
    long handle = fs_open_path(link, path, FS_OPEN_READ);
    if (handle < 0)
        return false;
    long got = fs_read_at(link, (uint64_t)handle, 0, FSTEST_DATA_BYTES);
    fs_close_handle(link, (uint64_t)handle);
    return got == (long)bytes && matches_pattern(fs_data(link), seed, 0, bytes);
}

/* Runs `fstest child ACTION HANDLE` and waits for it; its exit code. */
static int run_child(const char *action, uint64_t handle)
{
    char arguments[64];
    snprintf(arguments, sizeof arguments, "child %s %lu", action, handle);
    long pid = spawn("fstest", arguments, CORE_ANY, PRIORITY_APPLICATION);
    int code = -1;
    if (pid < 0 || wait_process(pid, &code) < 0)
        return -1;
    return code;
}

/* A writes through its handle after B unlinked the file and made another. */
static void write_after_unlink(struct fs_link *link, uint64_t handle)
{
    fill_pattern(fs_data(link), SEED_REWRITE, 0, STORAGE_BLOCK_BYTES);
    long written = fs_write_at(link, handle, 0, STORAGE_BLOCK_BYTES);
    report("unlinked_write", written == STORAGE_BLOCK_BYTES, written);
    long got = fs_read_at(link, handle, 0, SHARED_BYTES);
    const uint8_t *data = fs_data(link);
    bool mine = got == SHARED_BYTES &&
                matches_pattern(data, SEED_REWRITE, 0, STORAGE_BLOCK_BYTES) &&
                matches_pattern(data + STORAGE_BLOCK_BYTES, SEED_SHARED, STORAGE_BLOCK_BYTES,
                                SHARED_BYTES - STORAGE_BLOCK_BYTES);
    report("unlinked_read_back", mine, got);
    uint32_t links = 99;
    long stat = fs_stat_handle(link, handle, &links);
    report("unlinked_stat_links_0", stat == 0 && links == 0, links);
    report("other_file_intact", file_holds(link, "/fstest/other", SEED_OTHER, OTHER_BYTES), 0);
}

/* The inode of `path`, or 0. */
static uint32_t inode_of(struct fs_link *link, const char *path)
{
    long handle = fs_open_path(link, path, FS_OPEN_READ);
    if (handle < 0)
        return 0;
    uint32_t inode = fs_open_of(ica_control_of(link->control))->inode;
    fs_close_handle(link, (uint64_t)handle);
    return inode;
}

/* After A's last close the inode is free: a new file may take it, and A's
 * old handle reaches neither. */
static void after_last_close(struct fs_link *link, uint64_t handle, uint32_t inode)
{
    report("unlinked_close", fs_close_handle(link, handle) == 0, 0);
    long reuser = create_file(link, "/fstest/reuser", SEED_REUSER, STORAGE_BLOCK_BYTES);
    report("reuser_create", reuser > 0, reuser);
    printf("@json {\"kind\":\"fstest_inode_reuse\",\"unlinked\":%u,\"reuser\":%u}\n", inode,
           created_inode);
    fs_close_handle(link, (uint64_t)reuser);
    fill_pattern(fs_data(link), SEED_REWRITE, 0, STORAGE_BLOCK_BYTES);
    long result = fs_write_at(link, handle, 0, STORAGE_BLOCK_BYTES);
    report("closed_handle_write", result == -E_BAD_HANDLE, result);
    report("reuser_intact", file_holds(link, "/fstest/reuser", SEED_REUSER, STORAGE_BLOCK_BYTES),
           0);
    report("other_still_intact", file_holds(link, "/fstest/other", SEED_OTHER, OTHER_BYTES), 0);
}

void run_sharing_cases(struct fs_link *link)
{
    long handle = create_file(link, "/fstest/shared", SEED_SHARED, SHARED_BYTES);
    report("shared_create", handle > 0, handle);
    if (handle <= 0)
        return;
    uint32_t inode = created_inode;
    report("child_cannot_use_handle", run_child("steal", (uint64_t)handle) == 0, 0);
    report("child_unlink_and_create", run_child("unlink-create", 0) == 0, 0);
    uint32_t other = inode_of(link, "/fstest/other");
    report("open_inode_not_reused", other != 0 && other != inode, other);
    write_after_unlink(link, (uint64_t)handle);
    after_last_close(link, (uint64_t)handle, inode);
    report("child_ends_holding_unlinked", run_child("hold-unlinked", 0) == 0, 0);
    fs_prepare(link, FS_SYNC);
    long synced = fs_send(link, link->fs);
    report("sync_after_child_ended", synced == 0, synced);
}

/* Child: every use of the parent's handle is refused. */
static void steal(struct fs_link *link, uint64_t handle)
{
    report("steal_read", fs_read_at(link, handle, 0, 16) == -E_BAD_HANDLE, 0);
    report("steal_write", fs_write_at(link, handle, 0, 16) == -E_BAD_HANDLE, 0);
    uint32_t links;
    report("steal_stat", fs_stat_handle(link, handle, &links) == -E_BAD_HANDLE, 0);
    report("steal_readblock", fs_readblock(link, handle, 0, 1) == -E_BAD_HANDLE, 0);
    report("steal_close", fs_close_handle(link, handle) == -E_BAD_HANDLE, 0);
}

/* Child: unlinks the parent's open file and makes another. */
static void unlink_and_create(struct fs_link *link)
{
    long result = fs_path_call(link, FS_UNLINK, "/fstest/shared");
    report("child_unlink", result == 0, result);
    long handle = create_file(link, "/fstest/other", SEED_OTHER, OTHER_BYTES);
    report("child_create_other", handle > 0, handle);
    fs_close_handle(link, (uint64_t)handle);
}

/* Child: ends (without closing) while holding a file it unlinked. */
static void hold_unlinked(struct fs_link *link)
{
    long handle = create_file(link, "/fstest/held", SEED_SHARED, FSTEST_DATA_BYTES);
    long result = fs_path_call(link, FS_UNLINK, "/fstest/held");
    report("child_hold_unlinked", handle > 0 && result == 0, result);
}

int run_child_case(struct fs_link *link, int argc, char **argv)
{
    const char *action = argc >= 3 ? argv[2] : "";
    uint64_t handle = argc >= 4 ? (uint64_t)strtol(argv[3], NULL, 10) : 0;
    if (strcmp(action, "steal") == 0)
        steal(link, handle);
    else if (strcmp(action, "unlink-create") == 0)
        unlink_and_create(link);
    else if (strcmp(action, "hold-unlinked") == 0)
        hold_unlinked(link);
    else
        report("child_unknown_action", false, 0);
    return failures() == 0 ? 0 : 1;
}
