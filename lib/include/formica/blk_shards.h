/* blk_shards.h: a BLK client's way to every shard of BLK (docs/storage.md
 * "Shards"): their pids, a retried request to one shard, BLK_SYNC to all,
 * BLK_STATS summed, the disk's size. Which shard a block goes to:
 * formica/blk_stripes.h. */
#pragma once
#include <formica/blk_stripes.h>
#include <formica/instance.h>
#include <formica/protocol/blk.h>
#include <stdbool.h>
#include <stdint.h>

/* A client's view of BLK: how many shards the placement gives it, and the
 * pid of each (< 0 while not known). */
struct blk_shards {
    uint32_t count;
    long pids[SERVER_INSTANCES_MAX];
};

/* Learns the shard count from the placement and waits (at most
 * `milliseconds` for each) until every shard has registered; 0, or the
 * error of the first shard that did not come. */
long blk_shards_open(struct blk_shards *shards, uint64_t milliseconds);
/* Which shard `pid` is, or -1 when it is none of them. */
int blk_shards_index_of(const struct blk_shards *shards, long pid);
/* The restarted shard `shard` when its pid was `gone` (waited for, as
 * server_reconnect): its pid, also kept in `shards`; < 0 if it does not
 * come back. */
long blk_shards_reconnect(struct blk_shards *shards, uint32_t shard, long gone);
/* A synchronous request to shard `shard` that outlives its restart
 * (request_call_retrying's rules: prepare() fills `control` before every
 * attempt; only for requests that may be repeated). */
long blk_shards_call(struct blk_shards *shards, uint32_t shard, uint64_t control,
                     long (*prepare)(void *context), void *context);
/* BLK_SYNC to every shard in turn, each retried over a restart: 0 once
 * every shard's dirty blocks are on stable storage, else the first error
 * (the shards after it are still asked). */
long blk_shards_sync(struct blk_shards *shards, uint64_t control);
/* BLK_STATS of every shard, summed into *sum (capacity too: the whole
 * cache); 0 or the first error. */
long blk_shards_stats(struct blk_shards *shards, uint64_t control, struct blk_stats_message *sum);
/* BLK_LENT of every shard: the blocks lent now, summed; 0 or the first error. */
long blk_shards_lent(struct blk_shards *shards, uint64_t control, uint64_t *blocks);
/* The disk's size in bytes (BLK_INFO of shard 0: the shards share one disk);
 * 0 or the error. */
long blk_shards_disk_bytes(struct blk_shards *shards, uint64_t control, uint64_t *bytes);
