/* servers/fs/main.c: FS, the file server (program "fs"): mounts the ext2
 * disk through BLK, keeps its clients' open files (open_files.h), registers
 * "fs" and answers requests one at a time. If the disk cannot be mounted it
 * says why and answers every request with an error. */
#include "block_client.h"
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>

static struct fs_server server;
static struct open_files open_files;

static const char *mount_problem(long error)
{
    if (error == -E_CORRUPT)
        return "corrupt";
    if (error == -E_INVALID)
        return "unsupported";
    return "unreadable";
}

static uint64_t microseconds_since_boot(void)
{
    struct clock_info clock;
    return clock_get(&clock) == 0 ? clock.ticks * clock.tick_period_us : 0;
}

/* There is no real-time clock yet: times count from the image's last write
 * time, plus the seconds since boot (never 0, which e2fsck would take for an
 * orphan-list link in a deleted inode's dtime). */
static void update_time(uint64_t now_us)
{
    static uint32_t base;
    if (base == 0) {
        uint32_t wtime = server.fs.superblock.s_wtime, mtime = server.fs.superblock.s_mtime;
        base = (wtime > mtime ? wtime : mtime) + 1;
    }
    server.fs.time = base + (uint32_t)(now_us / 1000000);
}

/* The clock now, for the journal's idle commits. */
static void update_time_now(void)
{
    update_time(microseconds_since_boot());
}

static void mount_disk(void)
{
    long error = block_client_open(&server.device, &server.blk_pid);
    if (error == 0)
        error = fs_journal_mount(&server);
    if (error == 0) {
        server.mounted = true;
        update_time(microseconds_since_boot());
        printf("fs: mounted %s, %u-byte blocks, %u blocks, %u inodes\n",
               server.journal != NULL ? "ext3 (ordered journal)" : "ext2", server.fs.block_size,
               server.fs.superblock.s_blocks_count, server.fs.superblock.s_inodes_count);
        return;
    }
    server.unmounted_error = error == -E_CORRUPT ? -E_CORRUPT : -E_IO;
    printf("fs: cannot mount the disk: %s (%s); every request will get '%s'\n",
           mount_problem(error), error_text(error), error_text(server.unmounted_error));
}

static _Noreturn void serve(void)
{
    for (;;) {
        long control =
            server.mounted ? fs_journal_receive(&server, update_time_now) : ica_receive(0);
        if (control < 0) {
            printf("fs: receive failed: %s\n", error_text(control));
            exit(1);
        }
        uint64_t now_us = microseconds_since_boot();
        if (server.mounted)
            update_time(now_us);
        fs_close_dead_clients_if_due(&server, now_us);
        long result = fs_answer(&server, (uint64_t)control);
        if (result != FS_FORWARDED) {
            ica_control_of((uint64_t)control)->result = result;
            long error = ica_return((uint64_t)control);
            if (error != 0)
                printf("fs: return failed: %s\n", error_text(error));
        }
        if (server.mounted)
            fs_journal_after_request(&server);
    }
}

int main(void)
{
    mount_disk();
    fs_open_files_attach(&server, &open_files);
    long error = server_register(SERVER_NAME_FS);
    if (error != 0) {
        printf("fs: cannot register: %s\n", error_text(error));
        return 1;
    }
    serve();
}
