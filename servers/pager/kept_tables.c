/* kept_tables.c: the per-client block tables (state, copy valid, backend
 * slot) live in the pager's kept region and are changed in place before the
 * pager answers; each client's configuration has a finish marker. */
#include "kept_tables.h"
#include "kept_stores.h"
#include "node_directory.h"
#include <formica/errors.h>
#include <formica/kept_region.h>
#include <formica/ica.h>
#include <formica/request.h>
#include <stdio.h>
#include <string.h>

#define KEPT_MAGIC 0x314c4254474150ull /* "PAGTBL1" */
#define KEPT_VERSION 6
#define KEPT_FINISHED 0x4b45505446494e53ull

struct kept_client {
    uint64_t finished; /* KEPT_FINISHED once the fields below are whole */
    uint32_t pid, replicas;
    uint32_t uid, account; /* its requester's, for the per-account limits */
    uint64_t charged_bytes;
    struct pager_init_message asked;
    struct pager_counters counters;
};

struct kept_tables {
    struct kept_header header;
    struct kept_client clients[PAGER_CLIENTS];
    uint8_t state[PAGER_CLIENTS][KEPT_TABLE_BLOCKS];
    uint8_t has_copy[PAGER_CLIENTS][KEPT_TABLE_BLOCKS];
    uint32_t slot[PAGER_CLIENTS][KEPT_TABLE_BLOCKS];
    uint64_t sum[PAGER_CLIENTS][KEPT_TABLE_BLOCKS]; /* of the bytes of the block's last store */
    /* memory nodes: per block, each replica's (node, block on it) (node_directory.h) */
    uint32_t copies[PAGER_CLIENTS][KEPT_TABLE_BLOCKS * PAGER_MAX_REPLICAS];
    struct node_directory nodes;
    /* stores in flight: each dirty block's bytes until its backend acknowledged them */
    struct kept_stores stores;
};

static struct kept_tables *kept;

_Static_assert(PAGER_BLOCK_MAX_BYTES <= KEPT_STORE_SLOTS * KEPT_STORE_SLOT_BYTES,
               "the largest block must fit in the kept stores");

bool kept_tables_open(void)
{
    bool restored = false;
    long error = 0;
    kept = kept_region_open(SERVER_NAME_PAGER, sizeof(struct kept_tables), KEPT_MAGIC, KEPT_VERSION,
                            &restored, &error);
    if (kept == NULL)
        printf("pager: no kept region (%s): block tables do not survive a restart\n",
               error_text(error));
    return kept != NULL && restored;
}

void kept_tables_reuse(struct client *client, int index)
{
    client->state = kept->state[index];
    client->has_copy = kept->has_copy[index];
    client->slot = kept->slot[index];
    client->sum = kept->sum[index];
    client->copies = kept->copies[index];
    client->kept = true;
}

bool kept_tables_would_attach(const struct client *client)
{
    return kept != NULL && client->block_count <= KEPT_TABLE_BLOCKS;
}

bool kept_tables_attach(struct client *client, int index)
{
    if (!kept_tables_would_attach(client))
        return false;
    kept_tables_forget(index);
    kept_tables_reuse(client, index);
    memset(client->state, 0, client->block_count);
    memset(client->has_copy, 0, client->block_count);
    for (uint32_t block = 0; block < client->block_count; block++)
        client->slot[block] = PAGER_NO_SLOT;
    memset(client->copies, 0xff, (size_t)client->block_count * client->replicas * sizeof(uint32_t));
    return true;
}

void kept_tables_commit(const struct client *client, int index)
{
    if (!client->kept)
        return;
    struct kept_client *record = &kept->clients[index];
    record->pid = client->pid;
    record->uid = client->uid;
    record->account = client->account;
    record->charged_bytes = client->charged_bytes;
    record->replicas = client->replicas;
    record->counters = client->counters;
    record->asked = (struct pager_init_message){
        .base = client->base,
        .bytes = client->bytes,
        .limit_bytes = (uint64_t)client->limit_blocks * client->block_bytes,
        .block_bytes = client->block_bytes,
        .policy = client->policy.kind,
        .backend = client->backend->kind,
        .replicas = client->replicas,
        .inflight_bytes = client->inflight.limit,
        .persistent_key = client->persistent_key,
    };
    __atomic_store_n(&record->finished, KEPT_FINISHED, __ATOMIC_RELEASE);
}

struct node_directory *kept_tables_node_directory(void)
{
    return kept != NULL ? &kept->nodes : NULL;
}

void kept_tables_forget(int index)
{
    if (kept != NULL)
        __atomic_store_n(&kept->clients[index].finished, 0, __ATOMIC_RELEASE);
}

bool kept_tables_record(int index, struct pager_init_message *asked, struct pager_requester *who)
{
    if (kept == NULL || kept->clients[index].finished != KEPT_FINISHED)
        return false;
    const struct kept_client *record = &kept->clients[index];
    *asked = record->asked;
    *who = (struct pager_requester){record->pid, record->uid, record->account};
    return asked->block_bytes != 0 && asked->bytes / asked->block_bytes <= KEPT_TABLE_BLOCKS;
}

void kept_tables_note_store(struct client *client, uint32_t block, uint64_t data_ica)
{
    if (client->sum != NULL)
        client->sum[block] = kept_checksum(ica_address(data_ica), client->block_bytes);
}

bool kept_tables_store_matches(const struct client *client, uint32_t block, uint64_t data_ica)
{
    return client->sum != NULL &&
           client->sum[block] == kept_checksum(ica_address(data_ica), client->block_bytes);
}

void kept_tables_keep_counters(const struct client *client, int index)
{
    if (client->kept)
        kept->clients[index].counters = client->counters;
}

void kept_tables_take_counters(struct client *client, int index)
{
    client->counters = kept->clients[index].counters;
    client->charged_bytes = kept->clients[index].charged_bytes; /* still charged to it */
}

bool kept_tables_can_stage(const struct client *client)
{
    return !client->kept || kept == NULL ||
           kept_stores_have_room(&kept->stores, client->block_bytes);
}

void kept_tables_stage_store(const struct client *client, uint32_t block, uint64_t data_ica)
{
    if (client->kept && kept != NULL)
        kept_stores_keep(&kept->stores, client->pid, block, ica_address(data_ica),
                         client->block_bytes, client->sum[block]);
}

void kept_tables_end_store(const struct client *client, uint32_t block)
{
    if (kept != NULL)
        kept_stores_end(&kept->stores, client->pid, block);
}

bool kept_tables_staged_store(const struct client *client, uint32_t block, uint64_t data_ica)
{
    return kept != NULL && kept_stores_copy_back(&kept->stores, client->pid, block,
                                                 ica_address(data_ica), client->block_bytes);
}

void kept_tables_drop_stores(uint32_t pid)
{
    if (kept != NULL)
        kept_stores_drop(&kept->stores, pid);
}
