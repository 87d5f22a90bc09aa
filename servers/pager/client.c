/* client.c: the pager's clients (one pager region per process): PAGER_INIT
 * checks the configuration, the account's share of the slots, the backend's
 * room and the client's quota before it builds the block table; PAGER_CLEANUP
 * drains and reports the counters as @json, PAGER_STATS reads them. */
#include "backend_internal.h"
#include "client_share.h"
#include "kept_tables.h"
#include "pager.h"
#include <formica/refusal_log.h>
#include <formica/json.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct client clients[PAGER_CLIENTS];

struct client *client_find(uint32_t pid)
{
    for (int i = 0; i < PAGER_CLIENTS; i++)
        if (clients[i].used && clients[i].pid == pid)
            return &clients[i];
    return NULL;
}

/* The whole process table (PROCESS_LIST_MAX entries), not just its start. */
static bool process_alive(uint32_t pid)
{
    static struct process_info list[PROCESS_LIST_MAX];
    long count = process_list(list, PROCESS_LIST_MAX);
    for (long i = 0; i < count; i++)
        if (list[i].pid == pid && list[i].state != PROCESS_ZOMBIE)
            return true;
    return count < 0; /* cannot tell: keep it */
}

static int client_index(const struct client *client)
{
    return (int)(client - clients);
}

static void client_free_tables(struct client *client)
{
    kept_tables_forget(client_index(client));
    if (client->kept) {
        kept_tables_drop_stores(client->pid);
    } else {
        free(client->state);
        free(client->has_copy);
        free(client->slot);
        free(client->sum);
    }
    free(client->links);
    memset(client, 0, sizeof(*client));
}

/* Forgets a client whose process is gone (it never sent PAGER_CLEANUP). */
static void client_forget(struct client *client)
{
    readahead_detach(client);
    wait_for_stores(client);
    client->backend->detach(client, client->persistent_key != 0);
    client_free_tables(client);
}

const struct client *client_with_key(uint32_t backend, uint64_t key)
{
    for (int i = 0; i < PAGER_CLIENTS; i++)
        if (clients[i].used && key != 0 && clients[i].persistent_key == key &&
            clients[i].backend->kind == backend)
            return &clients[i];
    return NULL;
}

/* Refused by the account's share of the slots: one line, rate-limited. */
static void report_share(const struct pager_requester *who, long refusal)
{
    if (!refusal_may_print("pager", who->account))
        return;
    printf("pager: pid %u (account %u) refused a client slot: %s (an account holds at most "
           "%u of %u; %u are kept for init's account)\n",
           who->pid, who->account, error_text(refusal), PAGER_CLIENTS / 4, PAGER_CLIENTS,
           PAGER_CLIENTS / 4);
}

/* A free slot the requester's account may take (forgetting the clients
 * whose processes ended first), or NULL with *refusal set. */
static struct client *client_slot_for(const struct pager_requester *who, long *refusal)
{
    struct client *old = client_find(who->pid);
    if (old != NULL)
        client_forget(old); /* a new process with a reused pid */
    uint32_t accounts[PAGER_CLIENTS], used = 0;
    struct client *free_slot = NULL;
    for (int i = 0; i < PAGER_CLIENTS; i++) {
        if (clients[i].used && !process_alive(clients[i].pid))
            client_forget(&clients[i]);
        if (clients[i].used)
            accounts[used++] = clients[i].account;
        else if (free_slot == NULL)
            free_slot = &clients[i];
    }
    *refusal = client_share_allows(accounts, used, PAGER_CLIENTS, who->account);
    if (*refusal != 0) {
        report_share(who, *refusal);
        return NULL;
    }
    return free_slot;
}

static bool power_of_two(uint64_t value)
{
    return value != 0 && (value & (value - 1)) == 0;
}

static long check_configuration(const struct pager_init_message *asked)
{
    uint64_t block = asked->block_bytes;
    if (!power_of_two(block) || block < PAGER_BLOCK_MIN_BYTES || block > PAGER_BLOCK_MAX_BYTES)
        return -E_INVALID;
    if (asked->bytes < block || asked->bytes > PAGER_REGION_MAX_BYTES || asked->base % block != 0)
        return -E_INVALID;
    if (asked->policy != PAGER_POLICY_LRU && asked->policy != PAGER_POLICY_FIFO)
        return -E_INVALID;
    if (asked->replicas > PAGER_MAX_REPLICAS ||
        (asked->replicas > 1 && asked->backend != PAGER_BACKEND_NODE))
        return -E_INVALID;
    return backend_of_kind(asked->backend) == NULL ? -E_INVALID : 0;
}

static long client_allocate_tables(struct client *client)
{
    uint32_t count = client->block_count;
    client->links = malloc((size_t)count * sizeof(struct policy_link));
    if (kept_tables_attach(client, client_index(client)))
        return client->links == NULL ? -E_NO_MEMORY : 0;
    client->state = calloc(count, 1);
    client->has_copy = calloc(count, 1);
    client->slot = malloc((size_t)count * sizeof(uint32_t));
    client->sum = calloc(count, sizeof(uint64_t));
    if (client->state == NULL || client->has_copy == NULL || client->slot == NULL ||
        client->sum == NULL || client->links == NULL)
        return -E_NO_MEMORY;
    for (uint32_t block = 0; block < count; block++)
        client->slot[block] = PAGER_NO_SLOT;
    return 0;
}

static void client_configure(struct client *client, const struct pager_requester *who,
                             const struct pager_init_message *asked)
{
    client->used = true;
    client->pid = who->pid;
    client->uid = who->uid;
    client->account = who->account;
    client->base = asked->base;
    client->block_bytes = asked->block_bytes;
    client->block_count = (uint32_t)(asked->bytes / client->block_bytes);
    client->bytes = (uint64_t)client->block_count * client->block_bytes;
    uint64_t limit_blocks = asked->limit_bytes / client->block_bytes;
    client->limit_blocks = limit_blocks < PAGER_MIN_RESIDENT_BLOCKS ? PAGER_MIN_RESIDENT_BLOCKS
                                                                    : (uint32_t)limit_blocks;
    client->backend = backend_of_kind(asked->backend);
    client->replicas = asked->replicas == 0 ? 1 : asked->replicas;
    client->persistent_key = asked->persistent_key;
    client->backend_entry = -1;
    uint64_t limit_bytes = (uint64_t)client->limit_blocks * client->block_bytes;
    inflight_init(&client->inflight,
                  asked->inflight_bytes != 0 ? asked->inflight_bytes : limit_bytes / 8);
}

/* At most three quarters of a backend for one account's regions (each
 * region may have every block stored, times its replicas). */
static long client_backend_share(const struct client *client)
{
    uint64_t held = 0, asked = client->bytes * client->replicas;
    for (int i = 0; i < PAGER_CLIENTS; i++)
        if (clients[i].used && &clients[i] != client && clients[i].account == client->account &&
            clients[i].backend == client->backend)
            held += clients[i].bytes * clients[i].replicas;
    uint64_t total = client->backend->capacity_bytes();
    long error = client_share_backend(held, asked, total, client->account);
    if (error != 0 && refusal_may_print("pager", client->account))
        printf("pager: pid %u (account %u) refused: its regions would claim %lu KiB of the %s "
               "backend's %lu KiB, more than an account's three quarters\n",
               client->pid, client->account, (held + asked) >> 10, client->backend->name,
               total >> 10);
    return error;
}

/* Everything that can refuse the region without allocating for it: the
 * pager's own limit and the client's quota (its tables charged to it),
 * then the backend's room and key, and the account's share of it. */
static long client_admit(struct client *client)
{
    long error = client_charge_tables(client);
    if (error == 0 && ((error = client->backend->fits(client)) != 0 ||
                       (error = client_backend_share(client)) != 0))
        client_release_charge(client);
    if (error != 0)
        memset(client, 0, sizeof(*client));
    return error;
}

long client_init(const struct pager_requester *who, const struct pager_init_message *asked)
{
    long error = check_configuration(asked);
    if (error != 0)
        return error;
    struct client *client = client_slot_for(who, &error);
    if (client == NULL)
        return error;
    client_configure(client, who, asked);
    if ((error = client_admit(client)) != 0)
        return error;
    uint32_t pid = client->pid;
    error = client_allocate_tables(client);
    if (error == 0)
        policy_init(&client->policy, asked->policy, client->block_count, client->links);
    long attached = error == 0 ? client->backend->attach(client) : error;
    if (attached >= 0 && (error = readahead_attach(client)) != 0) {
        client->backend->detach(client, false);
        attached = error;
    }
    if (attached < 0) {
        client_release_charge(client);
        client_free_tables(client);
        return attached;
    }
    kept_tables_commit(client, client_index(client));
    printf("pager: pid %u region %lu KiB, block %u KiB, limit %u blocks, %s, %s%s%s\n", pid,
           client->bytes >> 10, client->block_bytes >> 10, client->limit_blocks,
           asked->policy == PAGER_POLICY_LRU ? "lru" : "fifo", client->backend->name,
           client->replicas > 1 ? " (replicated)" : "",
           attached > 0 ? " (previous contents reattached)" : "");
    return attached;
}

/* Persistent contents: every resident block goes to the backend now. */
static long flush_resident(struct client *client)
{
    for (uint32_t block = 0; block < client->block_count; block++) {
        if (client->state[block] != BLOCK_RESIDENT)
            continue;
        long error = evict_block(client, block, false);
        if (error != 0)
            return error;
    }
    return wait_for_stores(client);
}

static void print_counters(const struct client *client)
{
    const struct pager_counters *c = &client->counters;
    printf("@json {\"kind\":\"pager\",\"pid\":%u,\"backend\":", client->pid);
    json_print_string(client->backend->name);
    printf(",\"policy\":\"%s\",\"block_bytes\":%u,\"local_limit_bytes\":%lu,"
           "\"swap_in_blocks\":%lu,\"swap_out_blocks\":%lu,\"clean_drops\":%lu,"
           "\"zero_fills\":%lu,\"bytes_in\":%lu,\"bytes_out\":%lu,\"peak_inflight_bytes\":%lu,"
           "\"replicas\":%u,\"fetch_wait_us\":%lu,\"readahead_fetches\":%lu,"
           "\"readahead_unused\":%lu}\n",
           client->policy.kind == PAGER_POLICY_LRU ? "lru" : "fifo", client->block_bytes,
           (uint64_t)client->limit_blocks * client->block_bytes, c->swap_in_blocks,
           c->swap_out_blocks, c->clean_drops, c->zero_fills, c->bytes_in, c->bytes_out,
           client->inflight.peak, client->replicas, c->fetch_wait_us, c->readahead_fetches,
           c->readahead_unused);
}

static void print_live(const struct client *client)
{
    const struct pager_counters *c = &client->counters;
    printf("@json {\"kind\":\"pagerstat\",\"pid\":%u,\"backend\":\"%s\",\"replicas\":%u,"
           "\"block_bytes\":%u,\"resident_blocks\":%u,\"limit_blocks\":%u,"
           "\"swap_in_blocks\":%lu,\"swap_out_blocks\":%lu,\"clean_drops\":%lu,"
           "\"zero_fills\":%lu,\"inflight_bytes\":%lu}\n",
           client->pid, client->backend->name, client->replicas, client->block_bytes,
           policy_resident_count(&client->policy), client->limit_blocks, c->swap_in_blocks,
           c->swap_out_blocks, c->clean_drops, c->zero_fills, client->inflight.bytes);
}

long pager_print_report(void)
{
    long clients_seen = 0;
    for (int i = 0; i < PAGER_CLIENTS; i++)
        if (clients[i].used) {
            print_live(&clients[i]);
            clients_seen++;
        }
    backend_node_report();
    return clients_seen;
}

long client_cleanup(uint32_t pid)
{
    struct client *client = client_find(pid);
    if (client == NULL)
        return -E_NOT_FOUND;
    readahead_detach(client);
    long error = wait_for_stores(client);
    if (client->persistent_key != 0 && error == 0)
        error = flush_resident(client);
    print_counters(client);
    client->backend->detach(client, client->persistent_key != 0 && error == 0);
    client_release_charge(client);
    client_free_tables(client);
    return error;
}

long client_stats(uint32_t pid, struct pager_stats_message *answer)
{
    struct client *client = client_find(pid);
    if (client == NULL)
        return -E_NOT_FOUND;
    const struct pager_counters *c = &client->counters;
    *answer = (struct pager_stats_message){
        .swap_in_blocks = c->swap_in_blocks,
        .swap_out_blocks = c->swap_out_blocks,
        .bytes_in = c->bytes_in,
        .bytes_out = c->bytes_out,
        .clean_drops = c->clean_drops,
        .resident_bytes = (uint64_t)policy_resident_count(&client->policy) * client->block_bytes,
        .peak_inflight_bytes = client->inflight.peak,
        .zero_fills = c->zero_fills,
    };
    return 0;
}

/* A kept client whose process lives on and whose backend can take its
 * blocks back; its residency is checked at its first fault. */
static bool client_restore(struct client *client, const struct pager_requester *who,
                           const struct pager_init_message *asked)
{
    const struct backend *backend = backend_of_kind(asked->backend);
    if (backend == NULL || backend->reattach == NULL || !process_alive(who->pid))
        return false;
    client_configure(client, who, asked);
    kept_tables_reuse(client, client_index(client));
    client->links = malloc((size_t)client->block_count * sizeof(struct policy_link));
    if (client->links == NULL)
        return false;
    policy_init(&client->policy, asked->policy, client->block_count, client->links);
    kept_tables_take_counters(client, client_index(client));
    if (backend->reattach(client) != 0)
        return false;
    if (readahead_attach(client) != 0) {
        backend->detach(client, client->persistent_key != 0); /* undoes the reattach */
        return false;
    }
    client->adopt_pending = true;
    return true;
}

void clients_restore(void)
{
    for (int i = 0; i < PAGER_CLIENTS; i++) {
        struct pager_init_message asked;
        struct pager_requester who;
        if (!kept_tables_record(i, &asked, &who))
            continue;
        uint32_t pid = who.pid;
        if (client_restore(&clients[i], &who, &asked)) {
            printf("pager: restart: pid %u's block tables kept (%u blocks, %s)\n", pid,
                   clients[i].block_count, clients[i].backend->name);
            continue;
        }
        printf("pager: restart: pid %u's kept tables dropped (process ended or backend %u "
               "not kept); its space is free\n",
               pid, asked.backend);
        free(clients[i].links);
        clients[i].kept = true; /* the tables are the region's: nothing to free */
        client_free_tables(&clients[i]);
    }
}

/* A store in flight when the pager ended: the backend's copy is read back
 * and compared with the checksum kept before the store was sent. */
static bool store_reached_backend(struct client *client, uint32_t block)
{
    if (client->slot[block] == PAGER_NO_SLOT)
        return false;
    long ica = ica_allocate(ICA_KIND_DATA, client->block_bytes);
    if (ica < 0)
        return false;
    client->has_copy[block] = 1; /* the retrieve reads the slot */
    bool whole = client->backend->retrieve(client, block, (uint64_t)ica) == 0 &&
                 kept_tables_store_matches(client, block, (uint64_t)ica);
    client->has_copy[block] = 0;
    ica_free((uint64_t)ica);
    return whole;
}

void clients_keep_counters(void)
{
    for (int i = 0; i < PAGER_CLIENTS; i++)
        if (clients[i].used)
            kept_tables_keep_counters(&clients[i], i);
}

/* A store in flight when the pager ended that did not reach the backend:
 * its bytes, kept before it was sent, go back into the process (resident,
 * with no backend copy). 0, or an error when none were kept. */
static long restore_staged_store(struct client *client, uint32_t block)
{
    long ica = ica_allocate(ICA_KIND_DATA, client->block_bytes);
    if (ica < 0)
        return ica;
    long error = -E_NOT_FOUND;
    if (kept_tables_staged_store(client, block, (uint64_t)ica))
        error = pager_map(client->pid, block_address(client, block), client->block_bytes,
                          (uint64_t)ica);
    if (error != 0) {
        ica_free((uint64_t)ica);
        return error;
    }
    client->state[block] = BLOCK_RESIDENT;
    client->has_copy[block] = 0;
    policy_add(&client->policy, block);
    return 0;
}

/* Where a block whose store was in flight when the pager ended is now. */
static const char *settle_store(struct client *client, uint32_t block)
{
    client->state[block] = BLOCK_ON_BACKEND;
    client->has_copy[block] = store_reached_backend(client, block);
    const char *outcome = "its copy on the backend is whole";
    if (!client->has_copy[block])
        outcome =
            restore_staged_store(client, block) == 0 ? "its kept bytes are resident again" : "lost";
    kept_tables_end_store(client, block);
    return outcome;
}

/* One kept block after the restart: still mapped, or where its copy is. */
static long adopt_block(struct client *client, uint32_t block)
{
    uint8_t state = client->state[block];
    if (state != BLOCK_RESIDENT && state != BLOCK_STORING)
        return 0;
    long bits = pager_scan(client->pid, block_address(client, block), client->block_bytes, 0);
    if (bits < 0)
        return bits;
    if (bits & PAGER_SCAN_PRESENT) {
        client->state[block] = BLOCK_RESIDENT;
        policy_add(&client->policy, block);
    } else if (state == BLOCK_STORING) {
        const char *outcome = settle_store(client, block);
        printf("pager: block %u of pid %u was being stored when the pager ended: %s\n", block,
               client->pid, outcome);
    } else {
        client->state[block] = client->has_copy[block] ? BLOCK_ON_BACKEND : BLOCK_UNTOUCHED;
    }
    return 0;
}

long client_adopt(struct client *client)
{
    if (!client->adopt_pending)
        return 0;
    for (uint32_t block = 0; block < client->block_count; block++) {
        long error = adopt_block(client, block);
        if (error != 0)
            return error;
    }
    client->adopt_pending = false;
    uint32_t resident = policy_resident_count(&client->policy);
    printf("pager: pid %u adopted: %u blocks resident\n", client->pid, resident);
    printf("@json {\"kind\":\"pager_adopt\",\"pid\":%u,\"blocks\":%u,\"resident_blocks\":%u}\n",
           client->pid, client->block_count, resident);
    return 0;
}
