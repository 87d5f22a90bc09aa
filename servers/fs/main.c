/* servers/fs/main.c: FS, the file server (program "fs"): mounts the ext2
 * disk through BLK, registers "fs" and answers requests one at a time. If
 * the disk cannot be mounted it says why and answers every request with an error. */
#include "block_client.h"
#include "block_map_cache.h"
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>

static struct fs_server server;

static const char *mount_problem(long error)
{
    if (error == -E_CORRUPT)
        return "corrupt";
    if (error == -E_INVALID)
        return "unsupported";
    return "unreadable";
}

/* There is no real-time clock yet: times count from the image's last write
 * time, plus the seconds since boot (never 0, which e2fsck would take for an
 * orphan-list link in a deleted inode's dtime). */
static void update_time(void)
{
    static uint32_t base;
    if (base == 0) {
        uint32_t wtime = server.fs.superblock.s_wtime, mtime = server.fs.superblock.s_mtime;
        base = (wtime > mtime ? wtime : mtime) + 1;
    }
    struct clock_info clock;
    uint64_t seconds = 0;
    if (clock_get(&clock) == 0)
        seconds = clock.ticks * clock.tick_period_us / 1000000;
    server.fs.time = base + (uint32_t)seconds;
}

static void mount_disk(void)
{
    long error = block_client_open(&server.device, &server.blk_pid);
    if (error == 0)
        error = ext2_mount(&server.fs, &server.device);
    if (error == 0) {
        server.mounted = true;
        update_time();
        printf("fs: mounted ext2, %u-byte blocks, %u blocks, %u inodes\n", server.fs.block_size,
               server.fs.superblock.s_blocks_count, server.fs.superblock.s_inodes_count);
        return;
    }
    server.unmounted_error = error == -E_CORRUPT ? -E_CORRUPT : -E_IO;
    printf("fs: cannot mount the disk: %s (%s); every request will get '%s'\n",
           mount_problem(error), error_text(error), error_text(server.unmounted_error));
}

/* Only requests that change the file system stamp times: reads ask no clock. */
static bool changes_files(uint32_t operation)
{
    return operation != FS_READBLOCK && operation != FS_READ && operation != FS_STAT &&
           operation != FS_READDIR && operation != FS_SYNC;
}

/* Requests that neither show nor change an inode's times: the times owed by
 * small writes may wait past them. */
static bool leaves_times_owed(const struct ica_control *page)
{
    return page->operation == FS_READBLOCK || page->operation == FS_READ ||
           (page->operation == FS_WRITE && page->data_count == 0);
}

/* Requests that move no block and change no size: FS's block map cache may
 * outlive them (an in-place small write changes bytes only). */
static bool keeps_block_map(const struct ica_control *page)
{
    return page->operation == FS_READBLOCK || page->operation == FS_READ ||
           page->operation == FS_STAT || page->operation == FS_READDIR ||
           page->operation == FS_SYNC || (page->operation == FS_WRITE && page->data_count == 0);
}

/* Sends the answered (or rewritten) request on and receives the next one,
 * in one system call each way; a refused return is reported and followed
 * by a plain receive. */
static long pass_on_and_receive(uint64_t control, uint32_t operation, long result)
{
    struct ica_control *page = ica_control_of(control);
    if (result == FS_FORWARDED) {
        long next = ica_forward_receive(server.blk_pid, control, 0, 0);
        if (next >= 0)
            return next;
        result = fs_not_forwarded(page, operation, next);
    }
    page->result = result;
    long next = ica_return_receive(control, 0);
    if (next >= 0)
        return next;
    printf("fs: return failed: %s\n", error_text(next));
    return ica_receive(0);
}

static _Noreturn void serve(void)
{
    long control = ica_receive(0);
    for (;;) {
        if (control < 0) {
            printf("fs: receive failed: %s\n", error_text(control));
            exit(1);
        }
        struct ica_control *page = ica_control_of((uint64_t)control);
        uint32_t operation = page->operation;
        if (server.mounted && changes_files(operation))
            update_time();
        if (server.mounted && !leaves_times_owed(page))
            fs_times_flush(&server);
        if (!keeps_block_map(page))
            block_map_cache_clear();
        long result = fs_answer(&server, (uint64_t)control);
        control = pass_on_and_receive((uint64_t)control, operation, result);
    }
}

int main(void)
{
    mount_disk();
    long error = server_register(SERVER_NAME_FS);
    if (error != 0) {
        printf("fs: cannot register: %s\n", error_text(error));
        return 1;
    }
    serve();
}
