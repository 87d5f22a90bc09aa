/* readahead.c: fetching blocks before their fault (seed 004 §4.1's
 * prefetch). A fault on the block after one of the last few faulted blocks
 * continues a sequential stream (a merge sort reads two runs and writes a
 * third: several streams at once); the next blocks still on the backend
 * are then fetched in the background: one for a stream's first step, twice
 * as many at each step after (a random access that happens to hit the next
 * block costs one fetch, not a window), up to what the client's in-flight
 * bound (limit / 8) leaves room for (the streams share at most
 * READAHEAD_MAX entries). When most of the last JUDGED_FETCHES went
 * unused (a sort's random reads that look sequential now and then), the
 * streams fetch nothing for the next PAUSE_FAULTS faults. The fault on a
 * block fetched ahead takes the fetched data over. PAGER_PREFETCH fetches a
 * range the same way, several blocks at once (never paused). Needs a
 * backend with fetch_start. */
#include "pager.h"
#include <formica/request.h>
#include <formica/user.h>
#include <stdlib.h>

#define READAHEAD_MAX 8   /* blocks fetched ahead at once per client */
#define STREAMS 4         /* sequential streams followed at once */
#define JUDGED_FETCHES 32 /* fetches ahead judged together: most unused pauses them */
#define PAUSE_FAULTS 1024 /* faults without read-ahead after such a judgement */

struct ahead {
    bool used;
    uint32_t block;
    uint64_t data_ica;
    long handle;
};

struct readahead {
    uint32_t stream_next[STREAMS];  /* the block each stream's next fault would be */
    uint32_t stream_steps[STREAMS]; /* sequential faults the stream has seen */
    unsigned stream_victim;
    unsigned entry_victim;
    struct ahead entries[READAHEAD_MAX];
    uint32_t judged_fetches, judged_unused; /* since the last judgement */
    uint32_t paused_faults;                 /* faults left without read-ahead */
};

long readahead_attach(struct client *client)
{
    client->readahead = NULL;
    if (client->backend->fetch_start == NULL)
        return 0;
    client->readahead = calloc(1, sizeof(struct readahead));
    return client->readahead == NULL ? -E_NO_MEMORY : 0;
}

static void forget(struct client *client, struct ahead *entry)
{
    client->counters.readahead_unused++;
    client->readahead->judged_unused++;
    client->backend->fetch_finish(entry->handle);
    ica_free(entry->data_ica);
    entry->used = false;
}

static void forget_all(struct client *client)
{
    for (unsigned i = 0; i < READAHEAD_MAX; i++)
        if (client->readahead->entries[i].used)
            forget(client, &client->readahead->entries[i]);
}

void readahead_detach(struct client *client)
{
    if (client->readahead == NULL)
        return;
    forget_all(client);
    free(client->readahead);
    client->readahead = NULL;
}

static struct ahead *entry_of(struct readahead *ra, uint32_t block)
{
    for (unsigned i = 0; i < READAHEAD_MAX; i++)
        if (ra->entries[i].used && ra->entries[i].block == block)
            return &ra->entries[i];
    return NULL;
}

/* Blocks the in-flight bound leaves room for beside the stores (at least one). */
static unsigned window(const struct client *client)
{
    uint64_t room = client->inflight.limit > client->inflight.bytes
                        ? client->inflight.limit - client->inflight.bytes
                        : 0;
    uint64_t blocks = room / client->block_bytes;
    return blocks < 1 ? 1 : blocks > READAHEAD_MAX ? READAHEAD_MAX : (unsigned)blocks;
}

static bool fetchable(const struct client *client, uint32_t block)
{
    return client->state[block] == BLOCK_ON_BACKEND && client->has_copy[block] &&
           client->slot[block] != PAGER_NO_SLOT;
}

/* Starts fetching `block` into a fresh data ICA; false when it cannot now. */
static bool start_one(struct client *client, uint32_t block)
{
    struct readahead *ra = client->readahead;
    struct ahead *entry = entry_of(ra, block);
    if (entry != NULL || !fetchable(client, block))
        return entry != NULL;
    for (unsigned i = 0; i < READAHEAD_MAX && entry == NULL; i++)
        if (!ra->entries[i].used)
            entry = &ra->entries[i];
    for (unsigned i = 0; i < READAHEAD_MAX && entry == NULL; i++) {
        /* every entry holds a block: one already fetched and not wanted since gives way */
        struct ahead *old = &ra->entries[ra->entry_victim++ % READAHEAD_MAX];
        if (client->backend->fetch_ready(old->handle)) {
            forget(client, old);
            entry = old;
        }
    }
    long ica = entry == NULL ? -E_BUSY : ica_allocate(ICA_KIND_DATA, client->block_bytes);
    if (ica < 0)
        return false;
    long handle = client->backend->fetch_start(client, block, (uint64_t)ica);
    if (handle < 0) {
        ica_free((uint64_t)ica);
        return false;
    }
    *entry = (struct ahead){true, block, (uint64_t)ica, handle};
    client->counters.readahead_fetches++;
    ra->judged_fetches++;
    return true;
}

bool readahead_take(struct client *client, uint32_t block, uint64_t *data_ica, long *result)
{
    struct ahead *entry = client->readahead ? entry_of(client->readahead, block) : NULL;
    if (entry == NULL)
        return false;
    uint64_t start = clock_microseconds();
    *result = client->backend->fetch_finish(entry->handle);
    client->counters.fetch_wait_us += clock_microseconds() - start;
    *data_ica = entry->data_ica;
    entry->used = false;
    return true;
}

bool readahead_arrived(const struct client *client, uint32_t block)
{
    struct ahead *entry = client->readahead ? entry_of(client->readahead, block) : NULL;
    return entry != NULL && client->backend->fetch_ready(entry->handle);
}

/* How many sequential steps `block` makes in one of the recent streams
 * (which moves on); 0 when it continues none: it starts a stream in place of
 * the oldest. */
static uint32_t stream_steps_after(struct readahead *ra, uint32_t block)
{
    for (unsigned i = 0; i < STREAMS; i++)
        if (ra->stream_next[i] == block && block != 0) {
            ra->stream_next[i] = block + 1;
            return ++ra->stream_steps[i];
        }
    unsigned oldest = ra->stream_victim++ % STREAMS;
    ra->stream_next[oldest] = block + 1;
    ra->stream_steps[oldest] = 0;
    return 0;
}

/* Blocks to fetch after a stream's `steps`-th step: 1, 2, 4, ... up to the window. */
static unsigned ramp(uint32_t steps, unsigned most)
{
    return steps > 4 || (1u << (steps - 1)) > most ? most : 1u << (steps - 1);
}

/* After JUDGED_FETCHES fetches ahead: more than half of them unused pauses
 * the streams' fetches for PAUSE_FAULTS faults. True while paused. */
static bool paused(struct readahead *ra)
{
    if (ra->paused_faults > 0) {
        ra->paused_faults--;
        return true;
    }
    if (ra->judged_fetches < JUDGED_FETCHES)
        return false;
    bool wasted = ra->judged_unused * 2 > ra->judged_fetches;
    ra->judged_fetches = ra->judged_unused = 0;
    ra->paused_faults = wasted ? PAUSE_FAULTS : 0;
    return wasted;
}

void readahead_after_fault(struct client *client, uint32_t block)
{
    struct readahead *ra = client->readahead;
    if (ra == NULL)
        return;
    bool pausing = paused(ra); /* every fault counts down a pause */
    uint32_t steps = stream_steps_after(ra, block);
    if (steps == 0 || pausing)
        return;
    unsigned want = ramp(steps, window(client));

    for (uint32_t next = block + 1; next < client->block_count && next <= block + want; next++)
        if (!start_one(client, next))
            break;
}

long readahead_range(struct client *client, uint32_t first, uint32_t last, uint32_t budget)
{
    long fetched = 0;
    for (uint32_t block = first; block <= last && (uint32_t)fetched < budget;) {
        uint32_t started = block, end = block;
        for (; end <= last && end - started < READAHEAD_MAX; end++)
            if (client->state[end] != BLOCK_RESIDENT && !start_one(client, end) &&
                fetchable(client, end))
                break; /* no ICA or transfer free: finish these first */
        for (; block < end && (uint32_t)fetched < budget; block++) {
            if (client->state[block] == BLOCK_RESIDENT)
                continue;
            long error = make_room(client, 1);
            uint64_t ica;
            long result;
            if (error == 0 && readahead_take(client, block, &ica, &result))
                error = result == 0 ? map_fetched(client, block, ica, true) : result;
            else if (error == 0)
                error = fault_serve(client, block_address(client, block));
            if (error != 0)
                return error;
            fetched++;
        }
        if (end == started)
            block++;
    }
    return fetched;
}
