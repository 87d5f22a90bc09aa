/* fs_journal.c: the FS server's side of ext3: mounting through the
 * journal (replay at mount, refusals reported), committing when a
 * transaction is due (also while idle, by a timed receive), sync and fsync. */
#include "block_client.h"
#include "fs_server.h"
#include "journal.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <stdio.h>

static struct journal journal; /* about 2 MiB: the transaction's block copies */

static int flush_through_blk(void *context)
{
    (void)context;
    return (int)block_client_sync();
}

/* After a restart, the kept copy of the transaction the last FS never
 * committed goes into the log and home (kept_transaction.c). */
static long commit_kept(struct fs_server *server, struct fs_kept *kept)
{
    long committed = kept_transaction_commit(kept, &journal);
    if (committed < 0) {
        printf("fs: cannot commit the kept transaction: %s\n", error_text(committed));
        return committed == -E_CORRUPT ? 0 : committed;
    }
    server->kept_complete = true;
    if (committed > 0)
        printf("fs: committed %ld blocks of the kept transaction\n", committed);
    return 0;
}

long fs_journal_mount(struct fs_server *server, struct fs_kept *kept)
{
    struct journal_lower lower = {&server->device, flush_through_blk, NULL};
    if (kept != NULL)
        kept_transaction_prepare_replay(kept, &journal);
    bool refused = false;
    long error = journal_mount_or_read_only(&journal, &server->fs, lower, &refused);
    if (error != 0) {
        if (journal.problem != NULL)
            printf("fs: refusing the ext3 journal: %s\n", journal.problem);
        return error;
    }
    if (refused) {
        printf("fs: the ext3 journal is corrupt: %s; it is not replayed\n", journal.problem);
        return 0; /* read-only, through BLK directly */
    }
    if (!server->fs.has_journal)
        return 0;
    server->journal = &journal;
    if (journal.statistics.transactions_replayed > 0)
        printf("fs: journal replayed: %lu transactions, %lu blocks\n",
               journal.statistics.transactions_replayed, journal.statistics.blocks_replayed);
    return kept != NULL ? commit_kept(server, kept) : 0;
}

static void report(const char *what, long error)
{
    if (error < 0)
        printf("fs: journal %s failed: %s\n", what, error_text(error));
}

static uint32_t seconds_until_due(const struct fs_server *server)
{
    return server->journal == NULL ? UINT32_MAX : journal_seconds_until_due(server->journal);
}

/* How to wait for a transaction due in `due` seconds. */
static struct fs_wait wait_for(uint32_t due)
{
    if (due == UINT32_MAX)
        return (struct fs_wait){0}; /* no transaction runs: nothing to wait for */
    return (struct fs_wait){ICA_TIMEOUT, (uint64_t)(due == 0 ? 1 : due) * 1000};
}

struct fs_settled fs_settled = {.changes = FS_SETTLED_NONE}; /* fs_server.h */

/* fs_journal_settle when its last outcome does not hold: the transaction's
 * age is read once. */
struct fs_wait fs_journal_settle_anew(struct fs_server *server)
{
    struct journal *journal = server->journal;
    uint32_t due = seconds_until_due(server);
    if (due != UINT32_MAX && journal_should_commit(journal, due)) {
        fs_settled.changes = FS_SETTLED_NONE; /* a commit that failed is tried again next time */
        report("commit", journal_commit(journal));
        return wait_for(seconds_until_due(server));
    }
    struct fs_wait wait = wait_for(due);
    if (server->kept != NULL && kept_transaction_copied_changes != journal->changes)
        return wait; /* the copy lags (fs_journal_settled): not remembered */
    fs_settled.wait = wait;
    fs_settled.time = server->fs.time;
    fs_settled.changes = journal->changes;
    return wait;
}

bool fs_journal_holds_anew(const struct fs_server *server, struct block_map_entry *entry)
{
    if (fs_journal_holds(server, &entry->disk_block, 1))
        return true;
    entry->outside_journal = server->journal->changes;
    return false;
}

/* Waits for the next request; commits a due transaction while idle. */
long fs_journal_receive(struct fs_server *server, void (*update_time)(void))
{
    for (;;) {
        struct fs_wait wait = fs_journal_settle(server);
        if (wait.flags == 0)
            return ica_receive(0);
        long control = ica_receive_within(0, wait.timeout_ms);
        if (control != -E_NOT_FOUND)
            return control;
        update_time();
    }
}

long fs_journal_sync(struct fs_server *server)
{
    long result = server->journal != NULL ? journal_sync(server->journal) : block_client_sync();
    if (result < 0)
        printf("fs: sync failed: %s\n", error_text(result));
    return result;
}

/* fsync: the running transaction commits (with every data block written so
 * far, ordered mode); on ext2 the whole cache is written. */
long fs_journal_fsync(struct fs_server *server)
{
    long result = server->journal != NULL ? journal_commit(server->journal) : block_client_sync();
    if (result < 0)
        printf("fs: fsync failed: %s\n", error_text(result));
    return result;
}
