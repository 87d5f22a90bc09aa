/* servers/fs/main.c: FS, the file server (program "fs"): mounts the ext2
 * disk through BLK, keeps its clients' open files (open_files.h), registers
 * "fs" and answers requests one at a time. If the disk cannot be mounted it
 * says why and answers every request with an error. */
#include "block_client.h"
#include "block_pins.h"
#include "block_map_cache.h"
#include "freed_blocks.h"
#include "fs_server.h"
#include <formica/errors.h>
#include <formica/instance.h>
#include <formica/refusal_log.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>

static struct fs_server server;
static struct open_files open_files;
/* Which blocks the files claim (ext2_claims.c): 8 Mi blocks, 32 GiB of 4 KiB blocks. */
static uint8_t claims[1u << 20];

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
    update_time(clock_microseconds());
}

/* A writable file system's claims, found once (ext2_claims.c); said when
 * files are cross-linked or the scan could not see them all. */
static void scan_claims(void)
{
    if (server.fs.read_only)
        return;
    long error = ext2_claims_scan(&server.fs, claims, sizeof claims);
    const struct ext2_claims *found = &server.fs.claims;
    if (error != 0)
        printf("fs: cannot tell which blocks the files claim: %s\n", error_text(error));
    else if (found->twice_blocks > 0)
        printf("fs: %lu blocks are claimed by two files (cross-linked): they are never freed\n",
               (unsigned long)found->twice_blocks);
    if (error == 0 && found->partial)
        printf("fs: the files' claims are known for part of the disk only: a block two files "
               "claim may go unseen\n");
}

/* Mounts the disk; after a restart (kept != NULL) the journal is replayed
 * and the kept transaction committed first. */
static void mount_disk(struct fs_kept *kept)
{
    long error = block_client_open(&server.device);
    if (error == 0 && !server.lend_off)
        block_pins_open(server.instance.count); /* none with fs_lend_on=off: no borrows */
    if (error ==
        0) { /* before anything is written: docs/storage.md, "Freed blocks and lent pages" */
        freed_blocks_attach(&server.device);
        freed_blocks_retire_all();
    }
    fs_problems_attach(&server.device);
    if (error == 0)
        error = fs_journal_mount(&server, kept);
    if (error == 0) {
        server.mounted = true;
        update_time(clock_microseconds());
        printf("fs: mounted %s, %u-byte blocks, %u blocks, %u inodes\n",
               server.journal != NULL  ? "ext3 (ordered journal)"
               : server.fs.has_journal ? "ext3 without its journal"
                                       : "ext2",
               server.fs.block_size, server.fs.superblock.s_blocks_count,
               server.fs.superblock.s_inodes_count);
        scan_claims();
        fs_problems_report_mount(&server);
        server.read_only_told = server.fs.read_only;
        fs_problems_check(&server);
        fs_quota_start(&server);
        return;
    }
    server.unmounted_error = error == -E_CORRUPT ? -E_CORRUPT : -E_IO;
    printf("fs: cannot mount the disk: %s (%s); every request will get '%s'\n",
           mount_problem(error), error_text(error), error_text(server.unmounted_error));
}

/* Test options (kernel command line, docs/recovery.md): fs_end_after=N,
 * the first FS ends after its Nth request's work and kept copy, before the
 * answer; fs_end_on_stat=1, every FS ends so before answering an FS_STAT
 * (a request that kills its server each time it is sent). */
static void read_end_options(bool restarted)
{
    char value[24] = "";
    if (!restarted && kernel_option("fs_end_after", value, sizeof(value)) > 0)
        server.end_after = strtoul(value, NULL, 0);
    server.end_on_stat = kernel_option("fs_end_on_stat", value, sizeof(value)) > 0;
    server.end_asked = server.end_after != 0 || server.end_on_stat;
}

/* end_if_asked when a test option is set (apart: the serve loop's one test). */
static void end_if_due(uint32_t operation)
{
    if (server.end_on_stat && operation == FS_STAT) {
        printf("fs: ending before answering FS_STAT (fs_end_on_stat)\n");
        exit(3);
    }
    if (server.end_after == 0 || ++server.requests < server.end_after)
        return;
    printf("fs: ending after %lu requests, before answering the last (fs_end_after)\n",
           (unsigned long)server.requests);
    exit(3);
}

static inline void end_if_asked(uint32_t operation)
{
    if (server.end_asked)
        end_if_due(operation);
}

/* The time-stamp counter's value from which the serve loop's clock has
 * work again (FS's seconds change, or the dead clients' check falls due):
 * until then a request reads the counter and compares, nothing more. */
static uint64_t clock_due_tsc;

/* The microseconds now when the clock has work (never 0 then), else 0. */
static inline uint64_t clock_due_now(void)
{
    if (read_timestamp_counter() < clock_due_tsc)
        return 0;
    uint64_t now_us = clock_microseconds();
    return now_us != 0 ? now_us : 1;
}

/* The clock's work after update_time: the dead clients' check, and the
 * next moment either has anything to do (a client that opens a file
 * meanwhile is looked at by the next second's). Without the counter's rate
 * (clock_ticks_per_us 0) every request comes here, as before. */
static void clock_catch_up(uint64_t now_us)
{
    fs_close_dead_clients_if_due(&server, now_us);
    uint64_t due_us = (now_us / 1000000 + 1) * 1000000;
    uint64_t dead_clients_due_us = server.dead_clients_check_us + DEAD_CLIENTS_PERIOD_US;
    if (server.open_files->in_use > 0 && dead_clients_due_us < due_us)
        due_us = dead_clients_due_us;
    clock_due_tsc = due_us * clock_ticks_per_us;
}

/* The next request; while none comes, a due transaction commits. */
static long receive_next(void)
{
    return server.mounted ? fs_journal_receive(&server, update_time_now) : ica_receive(0);
}

/* No request came before the transaction fell due (or the requester had
 * gone): the clock, then the next request (a due transaction commits
 * first, in fs_journal_receive). */
static long idle_then_receive(void)
{
    if (server.mounted)
        update_time_now();
    return receive_next();
}

/* Forwards the request to the BLK shard its handler chose
 * (server.forward_shard) and receives the next one in one call; when that
 * shard has ended, forwards it to the restarted one (-E_SERVER_ENDED when
 * none comes). An error while FS still holds `control` is the forward's. */
static long forward_and_receive(uint64_t control, struct fs_wait wait)
{
    uint32_t shard = server.forward_shard;
    long pid = block_client_shards.pids[shard];
    long next = ica_forward_receive(pid, control, 0, wait.flags, wait.timeout_ms);
    if (next != -E_NOT_FOUND || !ica_held(control))
        return next;
    long blk = block_client_reconnect(shard, pid);
    if (blk < 0)
        return -E_SERVER_ENDED;
    return ica_forward_receive(blk, control, 0, wait.flags, wait.timeout_ms);
}

/* The forward to BLK was refused: logged, the request is `operation` again
 * (and FS forgets a block copy a BLK_PATCH would have changed); the error. */
static long fs_not_forwarded(struct ica_control *page, uint32_t operation, long error)
{
    refusal_log("fs", page->sender_account, "fs: forward of request %u to blk failed: %s\n",
                operation, error_text(error));
    if (page->operation == BLK_PATCH)
        block_client_forget(blk_patch_of(page)->block);
    page->operation = operation;
    return error;
}

/* pass_on_and_receive when the forward or the return failed (apart: the
 * usual pass on is one system call and its test). */
static long pass_on_failed(uint64_t control, uint32_t operation, long result, struct fs_wait wait,
                           long next)
{
    struct ica_control *page = ica_control_of(control);
    if (result >= 0 && operation == FS_READBLOCK && page->lent_count == 1 && ica_held(control)) {
        /* the block FS lent on was refused (its lender ended): BLK is asked
         * instead, so the request is answered whatever the refusal */
        result = fs_readblock_from_blk(&server, control, next);
        next = forward_and_receive(control, wait);
        if (next >= 0)
            return next;
    }
    if (result == FS_FORWARDED) {
        if (!ica_held(control))
            return idle_then_receive();
        page->result = fs_not_forwarded(page, operation, next);
        next = ica_return_receive(control, wait.flags, wait.timeout_ms);
        if (next >= 0)
            return next;
    }
    if (ica_held(control))
        printf("fs: return failed: %s\n", error_text(next));
    return idle_then_receive();
}

/* Sends the answered (or rewritten) request on and receives the next one,
 * in one system call (the receive as `wait` says); a refused return is
 * reported and followed by a plain receive. An error while FS no longer
 * holds `control` is the receive's. */
static inline long pass_on_and_receive(uint64_t control, uint32_t operation, long result,
                                       struct fs_wait wait)
{
    long next;
    if (result == FS_FORWARDED) {
        next = forward_and_receive(control, wait);
    } else {
        ica_control_of(control)->result = result;
        next = ica_return_receive(control, wait.flags, wait.timeout_ms);
    }
    if (next >= 0)
        return next;
    return pass_on_failed(control, operation, result, wait, next);
}

/* The owner that replaced `gone` (a restart), waited for; < 0 if none comes. */
static long owner_after(long gone)
{
    for (uint64_t waited = 0; waited < SERVER_START_WAIT_MS; waited += 10) {
        long owner = server_lookup_instance(SERVER_NAME_FS, 0);
        if (owner >= 0 && owner != gone)
            return owner;
        sleep_ms(10);
    }
    return -E_SERVER_ENDED;
}

/* A replica's forward of a change (or of a request on the owner's handle)
 * to the owner, keeping the sender's stamp, with direct return, and its
 * next receive; an owner that ended is waited for once, else the request
 * is answered -E_SERVER_ENDED (the client may send it again). */
static long forward_to_owner_and_receive(uint64_t control)
{
    long next = ica_forward_receive(server.owner_pid, control, ICA_KEEP_SENDER, 0, 0);
    if (next >= 0 || !ica_held(control))
        return next;
    long owner = owner_after(server.owner_pid);
    if (owner >= 0) {
        server.owner_pid = owner;
        next = ica_forward_receive(owner, control, ICA_KEEP_SENDER, 0, 0);
        if (next >= 0 || !ica_held(control))
            return next;
    }
    printf("fs: forward to the owner failed: %s\n", error_text(owner < 0 ? owner : next));
    ica_control_of(control)->result = -E_SERVER_ENDED;
    next = ica_return_receive(control, 0, 0);
    return next >= 0 ? next : idle_then_receive();
}

/* replica_passes_on's answer for a request the replica serves itself. */
#define SERVED_HERE (INT64_MIN + 1) /* neither a control ICA id nor an -E_* code */

/* A replica's first look at a request: what the owner changed so far is
 * applied, then the request is forwarded to the owner (the next request is
 * returned) or left to be served here (SERVED_HERE). Apart and cold: the
 * owner's loop only tests its instance. */
static long replica_passes_on(long control)
{
    struct ica_control *page = ica_control_of((uint64_t)control);
    if (server.replica != NULL)
        fs_replica_catch_up(&server);
    if (fs_replica_route(&server, page) == FS_ROUTE_SERVE) {
        if (page->operation == FS_READBLOCK)
            fs_replica_pause(); /* its blocks are mapped as of the view just taken */
        return SERVED_HERE;
    }
    return forward_to_owner_and_receive((uint64_t)control);
}

/* The request answered (a request with a tag is kept with its answer). */
static inline long answer(uint64_t control, uint32_t operation)
{
    if (fs_operation_is_tagged(operation))
        return fs_answer_tagged(&server, control);
    return fs_answer(&server, control);
}

/* Times the request now served was found stale (after_answer). */
static uint32_t stale_attempts;

/* After a handler that left the journal unsettled (it changed something;
 * a replica's never settle), what is rare (apart and cold, so the serve
 * loop keeps its one step): a replica's request that BLK refused as stale
 * (a block the owner freed after the replica's view) is to be taken again
 * (false: the serve loop's replica step catches up and routes it anew), a
 * few times (then the client gets -E_STALE and asks the owner); the
 * owner's records of the request are made visible to replicas, then the
 * blocks it freed are told to BLK, before anything can reuse them and
 * before the answer (a free, like every write of a block, changes the
 * journal, so it never settles). */
static __attribute__((noinline, cold)) bool after_answer(long result)
{
    if (result == -E_STALE && server.replica != NULL && stale_attempts++ < FS_REPLICA_STALE_RETRIES)
        return false; /* the serve loop's replica step catches up and routes it again */
    stale_attempts = 0;
    fs_publisher_make_visible(&server); /* the request's records, all at once */
    if (freed_blocks_untold != 0)
        freed_blocks_tell(fs_publisher_sequence(&server));
    return true;
}

/* How to wait for the next request: the journal's last outcome while it
 * is `settled`, else fs_journal_settle's. */
static inline struct fs_wait settle(bool settled)
{
    if (settled)
        return fs_settled.wait;
    return server.mounted ? fs_journal_settle(&server) : (struct fs_wait){0};
}

/* The rest of a request that left the journal unsettled (it changed
 * something): after_answer's rare steps, its changes kept before the
 * answer goes, the settle, the pass on. Apart, so the usual request, which
 * settles, passes on without a call of its own (and the serve loop keeps
 * its values in registers). The next request, or `control` again when a
 * replica's stale answer is to be served again, as of a newer view. */
static __attribute__((noinline)) long pass_on_unsettled(long control, uint32_t operation,
                                                        long result)
{
    if (__builtin_expect(result == -E_STALE || freed_blocks_untold != 0 || stale_attempts != 0 ||
                             fs_publisher_has_unseen(&server),
                         0) &&
        !after_answer(result))
        return control;
    if (!fs_operation_is_tagged(operation))
        fs_keep_changes(&server); /* before the answer goes */
    end_if_asked(operation);
    return pass_on_and_receive((uint64_t)control, operation, result, settle(false));
}

static _Noreturn void serve(void)
{
    long control = receive_next();
    for (;;) {
        if (control < 0) {
            printf("fs: receive failed: %s\n", error_text(control));
            exit(1);
        }
        if (__builtin_expect(server.instance.index != 0, 0)) {
            long next = replica_passes_on(control);
            if (next != SERVED_HERE) {
                control = next;
                continue;
            }
        }
        struct ica_control *page = ica_control_of((uint64_t)control);
        uint32_t operation = page->operation;
        uint64_t now_us = clock_due_now();
        if (now_us != 0 && server.mounted)
            update_time(now_us);
        /* What the request leaves as it is: its `leaves` lines in protocol/fs.messages. */
        uint32_t leaves = fs_what_request_leaves(page);
        if (server.mounted && !(leaves & FS_LEAVES_TIMES_OWED))
            fs_times_flush(&server);
        if (!(leaves & FS_LEAVES_BLOCK_MAP))
            block_map_cache_clear();
        if (now_us != 0)
            clock_catch_up(now_us);
        long result = answer((uint64_t)control, operation);
        fs_problems_check(&server);
        /* Settled: the request changed nothing to keep or settle (only a
         * mounted FS settles, so this FS is mounted). */
        if (!fs_journal_settled(&server)) {
            control = pass_on_unsettled(control, operation, result);
            continue;
        }
        end_if_asked(operation);
        control = pass_on_and_receive((uint64_t)control, operation, result, settle(true));
    }
}

/* The owner (instance 0, or FS alone): its kept state found (a restart),
 * mounted, registered; with replicas it publishes its operation log and
 * its handles before it takes a request. */
static long start_owner(void)
{
    bool restored = false;
    server.kept = fs_kept_state_open(&restored);
    if (server.kept != NULL && restored)
        kept_transaction_recover(&server.kept->fs);
    read_end_options(restored);
    fs_readblock_read_options(&server);
    mount_disk(server.kept != NULL && restored ? &server.kept->fs : NULL);
    if (server.kept != NULL && !restored)
        server.kept_complete = true; /* a first start: nothing was done before */
    /* The handle table lives in the kept region when there is one, so the
     * clients' open files survive a restart (docs/recovery.md). */
    struct open_files *table = server.kept != NULL ? &server.kept->open_files : &open_files;
    fs_open_files_attach(&server, table, restored && server.kept != NULL);
    if (restored && server.kept != NULL)
        printf("fs: %u open files kept across the restart\n", table->in_use);
    long error = server_register_instance(SERVER_NAME_FS, 0);
    if (error == 0 && server.instance.count > 1)
        fs_publisher_start(&server); /* without it the replicas forward everything */
    freed_blocks_tell(fs_publisher_sequence(&server)); /* the start's retire sealed */
    return error;
}

/* A replica (instance > 0): nothing of its own to keep (its clients'
 * handles are the owner's); registered first (the owner's region is
 * mapped for a registered instance), then it waits for the owner's log
 * and mounts. */
static long start_replica(void)
{
    read_end_options(false);
    fs_readblock_read_options(&server);
    long error = server_register_instance(SERVER_NAME_FS, server.instance.index);
    if (error != 0)
        return error;
    error = fs_replica_start(&server);
    if (error != 0)
        printf("fs: replica %u cannot serve by itself (%s): every request goes to the owner\n",
               server.instance.index, error_text(error));
    return 0;
}

int main(int argc, char **argv)
{
    if (server_instance_parse(argc, argv, &server.instance) != 0)
        return 2;
    long error = server.instance.index == 0 ? start_owner() : start_replica();
    if (error != 0) {
        printf("fs: cannot register: %s\n", error_text(error));
        return 1;
    }
    serve();
}
