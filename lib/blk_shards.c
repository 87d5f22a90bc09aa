/* blk_shards.c: a BLK client's way to BLK's shards (formica/blk_shards.h):
 * the shard count from the placement, each shard's pid, requests to one
 * shard retried over its restart, BLK_SYNC to all, BLK_STATS summed, the
 * disk's size (BLK_INFO). */
#include <formica/blk_shards.h>
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/syscalls.h>
#include <formica/user.h>

/* How many shards the placement gives BLK (1 without a placement). */
static uint32_t shard_count(void)
{
    static struct placement_info placement;
    if (placement_get(&placement) != 0)
        return 1;
    uint32_t count = placement.server_instance_count[SERVER_BLK];
    if (count == 0)
        return 1;
    return count > SERVER_INSTANCES_MAX ? SERVER_INSTANCES_MAX : count;
}

long blk_shards_open(struct blk_shards *shards, uint64_t milliseconds)
{
    shards->count = shard_count();
    for (uint32_t i = 0; i < SERVER_INSTANCES_MAX; i++)
        shards->pids[i] = -E_NOT_FOUND;
    for (uint32_t i = 0; i < shards->count; i++) {
        shards->pids[i] = server_wait_for_instance(SERVER_NAME_BLK, i, milliseconds);
        if (shards->pids[i] < 0)
            return shards->pids[i];
    }
    return 0;
}

int blk_shards_index_of(const struct blk_shards *shards, long pid)
{
    for (uint32_t i = 0; i < shards->count; i++)
        if (pid >= 0 && shards->pids[i] == pid)
            return (int)i;
    return -1;
}

long blk_shards_reconnect(struct blk_shards *shards, uint32_t shard, long gone)
{
    if (shard >= shards->count)
        return -E_INVALID;
    if (shards->pids[shard] >= 0 && shards->pids[shard] != gone)
        return shards->pids[shard]; /* a synchronous request found the new shard already */
    long next = server_reconnect_instance(SERVER_NAME_BLK, shard, gone);
    if (next >= 0)
        shards->pids[shard] = next;
    return next;
}

long blk_shards_call(struct blk_shards *shards, uint32_t shard, uint64_t control,
                     long (*prepare)(void *context), void *context)
{
    if (shard >= shards->count)
        return -E_INVALID;
    return request_call_retrying_instance(SERVER_NAME_BLK, shard, &shards->pids[shard], control,
                                          prepare, context);
}

/* An operation that takes no inputs (BLK_SYNC, BLK_STATS, BLK_INFO), in `control`. */
struct operation_call {
    uint64_t control;
    uint32_t operation;
};

static long prepare_operation(void *context)
{
    const struct operation_call *asked = context;
    request_prepare(asked->control, asked->operation);
    return 0;
}

/* `operation` (no inputs) to shard `shard`, retried over its restart. */
static long call_operation(struct blk_shards *shards, uint32_t shard, uint64_t control,
                           uint32_t operation)
{
    struct operation_call asked = {control, operation};
    return blk_shards_call(shards, shard, control, prepare_operation, &asked);
}

long blk_shards_sync(struct blk_shards *shards, uint64_t control)
{
    long first_error = 0;
    for (uint32_t shard = 0; shard < shards->count; shard++) {
        long error = call_operation(shards, shard, control, BLK_SYNC);
        if (error != 0 && first_error == 0)
            first_error = error;
    }
    return first_error;
}

static void add_stats(struct blk_stats_message *sum, const struct blk_stats_message *shard)
{
    sum->hits += shard->hits;
    sum->misses += shard->misses;
    sum->dirty += shard->dirty;
    sum->cached += shard->cached;
    sum->capacity += shard->capacity;
    sum->read_ahead += shard->read_ahead;
    sum->written_back += shard->written_back;
    sum->evictions += shard->evictions;
}

long blk_shards_stats(struct blk_shards *shards, uint64_t control, struct blk_stats_message *sum)
{
    *sum = (struct blk_stats_message){0};
    for (uint32_t shard = 0; shard < shards->count; shard++) {
        long error = call_operation(shards, shard, control, BLK_STATS);
        if (error != 0)
            return error;
        add_stats(sum, blk_stats_of(ica_control_of(control)));
    }
    return 0;
}

long blk_shards_lent(struct blk_shards *shards, uint64_t control, uint64_t *blocks)
{
    *blocks = 0;
    for (uint32_t shard = 0; shard < shards->count; shard++) {
        long error = call_operation(shards, shard, control, BLK_LENT);
        if (error != 0)
            return error;
        *blocks += blk_lent_of(ica_control_of(control))->blocks;
    }
    return 0;
}

long blk_shards_disk_bytes(struct blk_shards *shards, uint64_t control, uint64_t *bytes)
{
    long error = call_operation(shards, 0, control, BLK_INFO); /* every shard has one disk */
    if (error == 0)
        *bytes = blk_info_of(ica_control_of(control))->bytes;
    return error;
}
