/* tests/programs/blkread: reads disk blocks through BLK's shards as FS does
 * (formica/blk_shards.h: each part of the run to the shard that owns it) and
 * checks that every shard refuses the blocks it does not own. Needs the
 * block right: `run --driver blkread FIRST BLOCKS`. Prints
 * @json {"kind":"blkread","shards":S,"blocks":N,"parts":P,"result":E,"cksum":K}
 * (K the POSIX cksum of the blocks), one {"kind":"blkread_refusal",...} per
 * shard, and each shard's requests taken ({"kind":"blkread_instance",...}). */
#include <formica/blk_shards.h>
#include <formica/cksum.h>
#include <formica/instance.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_RUN_BLOCKS 64u /* one data ICA of 256 KiB */
#define SERVER_WAIT_MS 30000

static uint64_t control, data;

/* BLK_READ of `blocks` blocks from `first`, sent to pid `shard` as it
 * stands (no retry: a refusal is what is being checked). */
static long read_at(long shard, uint64_t first, uint32_t blocks)
{
    request_prepare(control, BLK_READ);
    *blk_read_of(ica_control_of(control)) =
        (struct blk_read_message){.first_block = first, .blocks = blocks};
    request_attach(control, data);
    long error = ica_request(shard, control, ICA_SYNC);
    return error != 0 ? error : ica_control_of(control)->result;
}

/* The run [first, first + blocks), part by part, into the checksum; the
 * first error, else 0. */
static long read_run(struct blk_shards *shards, uint64_t first, uint32_t blocks,
                     struct cksum_state *sum, uint32_t *parts)
{
    struct blk_run_part part;
    for (uint32_t done = 0; done < blocks; done += part.blocks, (*parts)++) {
        part = blk_run_part(first, blocks, done, shards->count);
        uint32_t count = part.blocks > MAX_RUN_BLOCKS ? MAX_RUN_BLOCKS : part.blocks;
        part.blocks = count;
        long result = read_at(shards->pids[part.shard], part.first, count);
        if (result != (long)(count * STORAGE_BLOCK_BYTES))
            return result < 0 ? result : -E_IO;
        cksum_add(sum, ica_address(data), (size_t)count * STORAGE_BLOCK_BYTES);
    }
    return 0;
}

/* Each shard asked for a block of the next shard and for a run that
 * crosses from its stripe into the next one: both must be refused. */
static bool check_refusals(const struct blk_shards *shards)
{
    bool all_refused = true;
    for (uint32_t shard = 0; shard < shards->count && shards->count > 1; shard++) {
        uint64_t own = (uint64_t)shard * BLK_STRIPE_BLOCKS;
        uint64_t foreign = own + BLK_STRIPE_BLOCKS; /* the next shard's first block */
        long one = read_at(shards->pids[shard], foreign, 1);
        long across = read_at(shards->pids[shard], foreign - 1, 2);
        long owned = read_at(shards->pids[shard], own, 1);
        bool refused =
            one == -E_INVALID && across == -E_INVALID && owned == (long)STORAGE_BLOCK_BYTES;
        printf("@json {\"kind\":\"blkread_refusal\",\"shard\":%u,\"foreign\":%ld,"
               "\"across\":%ld,\"owned\":%ld,\"ok\":%s}\n",
               shard, one, across, owned, refused ? "true" : "false");
        all_refused &= refused;
    }
    return all_refused;
}

static void print_instances(void)
{
    static struct server_instance_info instances[SERVER_INSTANCES_MAX];
    long count = server_instance_counts(SERVER_NAME_BLK, instances, SERVER_INSTANCES_MAX);
    for (long i = 0; i < count; i++)
        printf("@json {\"kind\":\"blkread_instance\",\"index\":%u,\"pid\":%u,\"core\":%u,"
               "\"taken\":%lu}\n",
               instances[i].index, instances[i].pid, instances[i].core, instances[i].taken);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: blkread FIRST BLOCKS (needs the block right: run --driver)\n");
        return 2;
    }
    uint64_t first = strtoul(argv[1], NULL, 0);
    uint32_t blocks = (uint32_t)strtoul(argv[2], NULL, 0);
    struct blk_shards shards;
    long error = blk_shards_open(&shards, SERVER_WAIT_MS);
    long control_id = ica_allocate(ICA_KIND_CONTROL, 4096);
    long data_id = ica_allocate(ICA_KIND_DATA, MAX_RUN_BLOCKS * STORAGE_BLOCK_BYTES);
    if (error != 0 || control_id < 0 || data_id < 0) {
        printf("blkread: no BLK shards or no ICAs: %s\n", error_text(error != 0       ? error
                                                                     : control_id < 0 ? control_id
                                                                                      : data_id));
        return 1;
    }
    control = (uint64_t)control_id;
    data = (uint64_t)data_id;
    struct cksum_state sum;
    cksum_begin(&sum);
    uint32_t parts = 0;
    long result = read_run(&shards, first, blocks, &sum, &parts);
    printf("@json {\"kind\":\"blkread\",\"shards\":%u,\"blocks\":%u,\"parts\":%u,\"result\":%ld,"
           "\"cksum\":%u}\n",
           shards.count, blocks, parts, result, cksum_end(&sum));
    bool refusals = check_refusals(&shards);
    print_instances();
    return result == 0 && refusals ? 0 : 1;
}
