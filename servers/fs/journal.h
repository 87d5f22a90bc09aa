/* journal.h: ext3 ordered-mode journaling for the ext2 library: the JBD2
 * journal in inode 8 (replay at mount, transactions, commit, checkpoint) and
 * the journaling ext2_device the library writes through. Freestanding, no
 * allocation: the caller provides struct journal (about 2 MiB). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "ext2.h"

#define JOURNAL_TRANSACTION_BLOCKS 512u /* metadata blocks one transaction holds */
#define JOURNAL_LOGGED_CAPACITY 16384u  /* blocks logged since the last checkpoint */
#define JOURNAL_FREED_CAPACITY 4096u    /* blocks freed by the running transaction */
#define JOURNAL_REVOKED_CAPACITY 16384u /* revoke records remembered during replay */
#define JOURNAL_COMMIT_SECONDS 5u       /* a transaction commits at most this old */

/* A set of block numbers (open addressing; UINT32_MAX marks an empty slot). */
#define BLOCK_SET_TOUCHED 64 /* slots remembered for a clear that needs no sweep */
struct block_set {
    uint32_t *keys;
    uint32_t *values;
    uint32_t capacity; /* a power of two */
    uint32_t count;
    /* Every slot given a key since the last clear, while there are at most
     * BLOCK_SET_TOUCHED of them (touched_count counts on past it): a clear then
     * empties those slots only, not all of a set that may hold thousands. */
    uint32_t touched_count;
    uint32_t touched[BLOCK_SET_TOUCHED];
};
void block_set_init(struct block_set *set, uint32_t *keys, uint32_t *values, uint32_t capacity);
void block_set_clear(struct block_set *set);
static inline uint32_t block_set_home(const struct block_set *set, uint32_t block)
{
    return (block * 2654435761u) & (set->capacity - 1);
}
/* The slot of `block`, or UINT32_MAX (inline: FS asks per readblock). */
static inline uint32_t block_set_find(const struct block_set *set, uint32_t block)
{
    for (uint32_t slot = block_set_home(set, block), probes = 0; probes < set->capacity;
         slot = (slot + 1) & (set->capacity - 1), probes++) {
        if (set->keys[slot] == block)
            return slot;
        if (set->keys[slot] == UINT32_MAX)
            return UINT32_MAX;
    }
    return UINT32_MAX;
}
/* Adds (or updates) block -> value; false when the set is full (3/4). */
bool block_set_put(struct block_set *set, uint32_t block, uint32_t value);
static inline bool block_set_contains(const struct block_set *set, uint32_t block)
{
    return block_set_find(set, block) != UINT32_MAX;
}
void block_set_remove(struct block_set *set, uint32_t block);

/* The device under the journal, with a write barrier: flush returns once
 * every write so far is on stable storage. */
struct journal_lower {
    struct ext2_device *device;
    int (*flush)(void *context);
    void *flush_context;
};

struct journal_statistics {
    uint64_t commits;
    uint64_t blocks_logged;
    uint64_t revokes_written;
    uint64_t checkpoints;
    uint64_t data_blocks_logged; /* data written into reused blocks, logged */
    uint64_t forced_commits;     /* an operation outgrew the transaction */
    uint64_t transactions_replayed;
    uint64_t blocks_replayed;
};

/* A stretch of the log on disk: log blocks [logical, logical + count) at
 * [physical, physical + count). */
#define JOURNAL_RUNS 32
struct journal_run {
    uint32_t logical;
    uint32_t physical;
    uint32_t count;
};

struct journal {
    struct ext2_fs *fs;
    struct journal_lower lower;
    struct ext2_device device; /* what the library writes through */
    struct ext2_inode inode;   /* the journal's inode (8) */
    uint32_t inode_block;      /* the inode-table block holding it */
    uint32_t inode_offset;     /* and where in that block */
    const char *problem;       /* why the journal was refused, for the log */
    const char *bad_tag;       /* replay's scan: the first tag that failed its checks */
    uint32_t bad_tag_sequence; /* and its transaction */
    /* Journal superblock, in host order. */
    uint32_t block_size, maxlen, first, sequence, start;
    uint32_t version, compat, incompat, ro_compat;
    uint8_t uuid[16];
    /* Where the log is (found once at load: journal_map needs no tree walk)
     * and every block the journal owns, indirect ones too (protected from
     * files and allocations: fs->protected_ranges). */
    struct journal_run runs[JOURNAL_RUNS];
    uint32_t run_count;
    struct ext2_block_range owned[EXT2_PROTECTED_RANGES];
    uint32_t owned_count;
    uint32_t tag_bytes;
    bool checksum_v1;          /* compat "checksum": crc32_be of each transaction */
    uint32_t checksum_version; /* 2 or 3: crc32c per block (replay only), else 0 */
    uint32_t checksum_seed;    /* crc32c of the journal's UUID */
    uint32_t tail_bytes;       /* 4 with csum v2/v3: a descriptor/revoke block's checksum */
    uint32_t transaction_crc;  /* that checksum, while writing or scanning one */
    /* The log: [first, head) holds transactions since the last checkpoint. */
    uint32_t head;
    uint32_t next_tid;
    bool log_empty; /* s_start is 0 on disk */
    /* The running transaction. */
    uint32_t transaction_blocks;
    uint32_t transaction_numbers[JOURNAL_TRANSACTION_BLOCKS];
    uint32_t transaction_started; /* fs->time of its first change */
    bool freed_overflow;          /* too many frees: log every data write */
    uint32_t revoke_count;
    uint32_t revokes[JOURNAL_FREED_CAPACITY];
    struct block_set transaction; /* block -> slot in buffers */
    struct block_set logged;      /* blocks in the log since the last checkpoint */
    struct block_set freed;       /* blocks freed by the running transaction */
    struct block_set revoked;     /* replay: block -> newest revoking sequence */
    uint32_t transaction_keys[JOURNAL_TRANSACTION_BLOCKS * 2];
    uint32_t transaction_values[JOURNAL_TRANSACTION_BLOCKS * 2];
    uint32_t logged_keys[JOURNAL_LOGGED_CAPACITY * 2];
    uint32_t freed_keys[JOURNAL_FREED_CAPACITY * 2];
    uint32_t revoked_keys[JOURNAL_REVOKED_CAPACITY * 2];
    uint32_t revoked_values[JOURNAL_REVOKED_CAPACITY * 2];
    struct journal_statistics statistics;
    /* For FS's kept copy (servers/fs/kept_transaction.c): which transaction
     * buffers changed since the copy was last taken, the first sequence the
     * log did not commit (at mount), and revokes to honour at replay. */
    uint8_t changed[JOURNAL_TRANSACTION_BLOCKS];
    uint64_t changes; /* counts changes to the transaction, revokes and commits */
    uint32_t first_uncommitted;
    uint32_t kept_revoke_sequence;
    uint32_t kept_revoke_count;
    const uint32_t *kept_revokes;
    uint8_t scratch[EXT2_MAX_BLOCK_SIZE];
    uint8_t buffers[JOURNAL_TRANSACTION_BLOCKS][EXT2_MAX_BLOCK_SIZE];
};

/* Mounts an ext2 or ext3 file system: ext2_mount, then for has_journal the
 * journal is loaded and checked, replayed if it needs recovery (the file
 * system is then mounted again), and started: fs->device becomes
 * &journal->device. Returns 0, -E_INVALID (an unsupported journal feature:
 * journal->problem says which), -E_CORRUPT or a device error. */
int journal_mount(struct journal *journal, struct ext2_fs *fs, struct journal_lower lower);

/* journal_mount; when the journal itself is corrupt (journal->problem set,
 * -E_CORRUPT: a bad superblock, a log that fails its checks), the file
 * system is mounted read-only without it instead and nothing is replayed or
 * written (fs->read_only_reason says so, journal->problem says why).
 * Returns 0 then, with *journal_refused true. */
int journal_mount_or_read_only(struct journal *journal, struct ext2_fs *fs,
                               struct journal_lower lower, bool *journal_refused);

/* Loads inode 8 and the journal superblock; refuses what is not supported. */
int journal_load(struct journal *journal, struct ext2_fs *fs, struct journal_lower lower);
/* Replays the committed transactions from s_start (revokes honoured), then
 * marks the journal empty. Returns the number of transactions replayed. */
int journal_replay(struct journal *journal);
/* Routes fs->device through the journal and sets needs_recovery on disk. */
int journal_start(struct journal *journal);

/* Commits the running transaction: its data blocks (already written in
 * place) and log copies reach the disk, then the commit block; then the
 * metadata goes to its home blocks. Nothing to commit is not an error. */
int journal_commit(struct journal *journal);
/* Commit, then make every home block durable and empty the log. */
int journal_sync(struct journal *journal);
/* After a restart, once the kept copy of a transaction that never committed
 * is in the running transaction (journal_transaction_buffer): commits and
 * checkpoints it, and mounts the file system again from the disk. */
int journal_commit_and_remount(struct journal *journal);
/* The blocks one transaction may hold: a quarter of the log (as JBD2), at
 * most JOURNAL_TRANSACTION_BLOCKS. */
static inline uint32_t journal_transaction_limit(const struct journal *journal)
{
    uint32_t quarter = (journal->maxlen - journal->first) / 4;
    return quarter < JOURNAL_TRANSACTION_BLOCKS ? quarter : JOURNAL_TRANSACTION_BLOCKS;
}
/* Seconds until the running transaction is due (UINT32_MAX: none runs).
 * Inline, as the two below: FS asks after every request. */
static inline uint32_t journal_seconds_until_due(const struct journal *journal)
{
    if (journal->transaction_blocks == 0 && journal->revoke_count == 0)
        return UINT32_MAX;
    uint32_t age = journal->fs->time - journal->transaction_started;
    return age >= JOURNAL_COMMIT_SECONDS ? 0 : JOURNAL_COMMIT_SECONDS - age;
}
/* Whether the running transaction (due in `seconds_until_due`) must commit
 * now: JOURNAL_COMMIT_SECONDS old (by fs->time) or more than half full. */
static inline bool journal_should_commit(const struct journal *journal, uint32_t seconds_until_due)
{
    return seconds_until_due == 0 ||
           journal->transaction_blocks * 2 > journal_transaction_limit(journal);
}
/* Commits when journal_should_commit says so; call between operations. */
static inline int journal_commit_if_due(struct journal *journal)
{
    uint32_t due = journal_seconds_until_due(journal);
    if (due == UINT32_MAX)
        return 0; /* nothing to commit: the common case after a read */
    return journal_should_commit(journal, due) ? journal_commit(journal) : 0;
}
/* True when the block's newest contents are in the running transaction, not
 * yet in place (a reader of the raw disk block must ask the library). */
static inline bool journal_holds(const struct journal *journal, uint32_t block)
{
    return block_set_contains(&journal->transaction, block);
}

/* JBD2's v1 transaction checksum (journal_checksum.c). */
uint32_t journal_crc32_be(uint32_t crc, const void *data, uint32_t length);
/* crc32c, raw (the caller seeds it; JBD2 csum v2/v3). */
uint32_t journal_crc32c(uint32_t crc, const void *data, uint32_t length);
#define JOURNAL_CRC32C_CHECKSUM 4 /* s_checksum_type of csum v2/v3 */
#define JOURNAL_CRC32_CHECKSUM 1  /* h_chksum_type of a v1 checksum */
#define JOURNAL_CRC32_CHECKSUM_SIZE 4

/* Journal-internal helpers (journal.c). */
int journal_map(struct journal *journal, uint32_t logical, uint32_t *physical);
int journal_read_log_block(struct journal *journal, uint32_t logical, void *buffer);
int journal_write_log_block(struct journal *journal, uint32_t logical, const void *buffer);
int journal_write_superblock(struct journal *journal);
int journal_flush(struct journal *journal);
uint32_t journal_wrap(const struct journal *journal, uint32_t position);
/* The transaction's buffer for a block (journal_commit.c); NULL when full. */
uint8_t *journal_transaction_buffer(struct journal *journal, uint32_t block);
void journal_device_init(struct journal *journal);
