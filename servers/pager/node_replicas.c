/* node_replicas.c: which memory nodes hold each block's copies. Copy 0 goes
 * first-free over all nodes, copy r to the next live node after copy r-1's
 * that holds no copy yet. A dead node's copies are forgotten; blocks that
 * still have a copy are re-replicated when a live node has room; a block
 * with no copy left is reported to its owner, never silently dropped. Copies
 * are named (node, block on it) through node_directory.h. */
#include "node_replicas.h"
#include "node_directory.h"
#include <formica/errors.h>
#include <stdio.h>
#include <stdlib.h>

struct replica_table {
    struct client *client;
    uint32_t *copies; /* block_count * replicas, NODE_COPY_NONE where none */
};

static struct replica_table tables[PAGER_CLIENTS];
static bool repair_wanted;

static struct replica_table *table_of(const struct client *client)
{
    for (unsigned i = 0; i < PAGER_CLIENTS; i++)
        if (tables[i].client == client)
            return &tables[i];
    return NULL;
}

static uint32_t *copy_at(const struct client *client, uint32_t block, unsigned replica)
{
    struct replica_table *table = table_of(client);
    return table == NULL ? NULL : &table->copies[(uint64_t)block * client->replicas + replica];
}

static uint32_t slot_of_copy(uint32_t copy)
{
    int64_t slot = node_directory_slot(&node_backend.cluster, copy);
    return slot < 0 ? PAGER_NO_SLOT : (uint32_t)slot;
}

/* The copy naming a slot just taken; a slot on a node the directory cannot
 * name is given back (the copy is not made). */
static uint32_t name_copy(int64_t fresh)
{
    uint32_t copy = node_directory_copy(&node_backend.cluster, (uint64_t)fresh);
    if (copy == NODE_COPY_NONE)
        memnode_slot_free(&node_backend.cluster, (uint64_t)fresh);
    return copy;
}

/* The client's table: in the kept region when its tables are kept (as they
 * are: a restart reads them back), else on the heap. */
static struct replica_table *table_take(struct client *client)
{
    struct replica_table *table = table_of(NULL);
    if (table == NULL)
        return NULL;
    table->copies = client->copies;
    if (table->copies == NULL) {
        uint64_t count = (uint64_t)client->block_count * client->replicas;
        table->copies = malloc(count * sizeof(uint32_t));
        if (table->copies == NULL)
            return NULL;
        for (uint64_t i = 0; i < count; i++)
            table->copies[i] = NODE_COPY_NONE;
    }
    table->client = client;
    return table;
}

static void table_give_back(struct replica_table *table)
{
    if (table->copies != table->client->copies)
        free(table->copies);
    table->copies = NULL;
    table->client = NULL;
}

long node_replicas_attach(struct client *client)
{
    return table_take(client) == NULL ? -E_NO_MEMORY : 0;
}

void node_replicas_detach(struct client *client)
{
    struct replica_table *table = table_of(client);
    if (table == NULL)
        return;
    uint64_t count = (uint64_t)client->block_count * client->replicas;
    for (uint64_t i = 0; i < count; i++) {
        uint32_t slot = slot_of_copy(table->copies[i]);
        if (slot != PAGER_NO_SLOT)
            memnode_slot_free(&node_backend.cluster, slot);
    }
    table_give_back(table);
}

uint32_t node_replicas_slot(const struct client *client, uint32_t block, unsigned replica)
{
    uint32_t *copy = copy_at(client, block, replica);
    return copy == NULL ? PAGER_NO_SLOT : slot_of_copy(*copy);
}

static bool node_holds_copy(const struct client *client, uint32_t block, int node)
{
    for (unsigned r = 0; r < client->replicas; r++) {
        uint32_t slot = node_replicas_slot(client, block, r);
        if (slot != PAGER_NO_SLOT && memnode_slot_node(&node_backend.cluster, slot) == node)
            return true;
    }
    return false;
}

/* A slot for a new copy on a live node without one, after `after`'s node. */
static int64_t slot_for_copy(const struct client *client, uint32_t block, int after)
{
    struct memnode_cluster *cluster = &node_backend.cluster;
    if (after < 0) {
        int64_t slot = memnode_slot_allocate(cluster);
        int node = slot < 0 ? -1 : memnode_slot_node(cluster, (uint64_t)slot);
        if (slot < 0 || !cluster->nodes[node].dead)
            return slot;
        memnode_slot_free(cluster, (uint64_t)slot); /* first-free landed on a dead node */
    }
    for (unsigned step = 1; step <= cluster->node_count; step++) {
        unsigned node =
            (unsigned)(after + (int)step + (int)cluster->node_count) % cluster->node_count;
        if (cluster->nodes[node].dead || node_holds_copy(client, block, (int)node))
            continue;
        int64_t slot = memnode_slot_allocate_on(cluster, node);
        if (slot >= 0)
            return slot;
    }
    return -1;
}

long node_replicas_place(struct client *client, uint32_t block)
{
    int previous = -1;
    unsigned placed = 0;
    for (unsigned r = 0; r < client->replicas; r++) {
        uint32_t *copy = copy_at(client, block, r);
        if (copy == NULL)
            return -E_INVALID;
        if (*copy == NODE_COPY_NONE) {
            int64_t fresh = slot_for_copy(client, block, previous);
            if (fresh >= 0)
                *copy = name_copy(fresh);
        }
        uint32_t slot = slot_of_copy(*copy);
        if (slot != PAGER_NO_SLOT) {
            previous = memnode_slot_node(&node_backend.cluster, slot);
            placed++;
        }
    }
    if (placed == 0)
        return -E_NO_SPACE;
    if (placed < client->replicas)
        repair_wanted = true; /* fewer copies than asked: more when a node has room */
    client->slot[block] = node_replicas_slot(client, block, 0) != PAGER_NO_SLOT
                              ? node_replicas_slot(client, block, 0)
                              : 0; /* "placed" (the replica table says where) */
    return 0;
}

unsigned node_replicas_live(const struct client *client, uint32_t block)
{
    unsigned live = 0;
    for (unsigned r = 0; r < client->replicas; r++)
        live += node_replicas_slot(client, block, r) != PAGER_NO_SLOT;
    return live;
}

void node_replicas_copy_failed(struct client *client, uint32_t block, uint64_t slot)
{
    for (unsigned r = 0; r < client->replicas; r++) {
        uint32_t *copy = copy_at(client, block, r);
        if (copy != NULL && *copy != NODE_COPY_NONE && slot_of_copy(*copy) == slot) {
            *copy = NODE_COPY_NONE;
            node_backend.copies_lost++;
            repair_wanted = true;
        }
    }
}

/* Forgets `table`'s copies on `node`: copies lost, and blocks left with none. */
static void forget_copies_on(struct replica_table *table, unsigned node, uint64_t *copies,
                             uint64_t *orphans)
{
    struct client *client = table->client;
    for (uint32_t block = 0; block < client->block_count; block++) {
        bool lost_one = false;
        for (unsigned r = 0; r < client->replicas; r++) {
            uint32_t *copy = &table->copies[(uint64_t)block * client->replicas + r];
            uint32_t slot = slot_of_copy(*copy);
            if (slot != PAGER_NO_SLOT &&
                memnode_slot_node(&node_backend.cluster, slot) == (int)node) {
                *copy = NODE_COPY_NONE;
                lost_one = true;
                (*copies)++;
            }
        }
        if (!lost_one || node_replicas_live(client, block) > 0)
            continue;
        client->has_copy[block] = 0; /* a resident block is stored again when evicted */
        if (client->state[block] == BLOCK_ON_BACKEND)
            (*orphans)++;
    }
}

void node_replicas_node_died(struct memnode_cluster *cluster, unsigned node)
{
    uint64_t copies = 0, orphans = 0;
    for (unsigned i = 0; i < PAGER_CLIENTS; i++)
        if (tables[i].client != NULL)
            forget_copies_on(&tables[i], node, &copies, &orphans);
    node_backend.copies_lost += copies;
    node_backend.blocks_lost += orphans;
    repair_wanted = true;
    struct memnode_node *n = &cluster->nodes[node];
    printf("pager: memory node %u (%02x:%02x:%02x:%02x:%02x:%02x) ", n->node_id, n->mac[0],
           n->mac[1], n->mac[2], n->mac[3], n->mac[4], n->mac[5]);
    if (n->lost_reason != NULL)
        printf("is not used any more: it %s", n->lost_reason);
    else
        printf("is dead: silent for %lu s while awaited",
               (unsigned long)(cluster->dead_after_us / 1000000));
    printf("; %lu block copies were on it, %lu blocks have no copy left\n", (unsigned long)copies,
           (unsigned long)orphans);
    printf("@json {\"kind\":\"memnode_dead\",\"node\":%u,\"copies_lost\":%lu,"
           "\"blocks_without_copy\":%lu,\"restarted_empty\":%s}\n",
           n->node_id, (unsigned long)copies, (unsigned long)orphans,
           n->lost_reason != NULL ? "true" : "false");
}

void node_replicas_report_lost(const struct client *client, uint32_t block)
{
    printf("pager: block %u of pid %u (address 0x%lx) cannot be had: every memory node that "
           "held a copy is dead; the process ends\n",
           block, client->pid, block_address(client, block));
    printf("@json {\"kind\":\"pager_block_lost\",\"pid\":%u,\"block\":%u,\"address\":%lu,"
           "\"replicas\":%u}\n",
           client->pid, block, block_address(client, block), client->replicas);
}

bool node_replicas_need_repair(void)
{
    return repair_wanted;
}

/* Copies block `block` from a live copy to a new slot on another node. */
static bool repair_block(struct client *client, uint32_t block, uint8_t *buffer)
{
    uint32_t source = PAGER_NO_SLOT;
    for (unsigned r = 0; r < client->replicas && source == PAGER_NO_SLOT; r++)
        source = node_replicas_slot(client, block, r);
    if (source == PAGER_NO_SLOT)
        return false;
    for (unsigned r = 0; r < client->replicas; r++) {
        uint32_t *copy = copy_at(client, block, r);
        if (*copy != NODE_COPY_NONE)
            continue;
        int64_t fresh =
            slot_for_copy(client, block, memnode_slot_node(&node_backend.cluster, source));
        if (fresh < 0)
            return false; /* no live node has room: later */
        if (memnode_retrieve(&node_backend.cluster, source, buffer) != 0 ||
            memnode_store(&node_backend.cluster, (uint64_t)fresh, buffer) != 0) {
            memnode_slot_free(&node_backend.cluster, (uint64_t)fresh);
            return false;
        }
        *copy = name_copy(fresh);
        if (*copy == NODE_COPY_NONE)
            return false;
        node_backend.copies_repaired++;
    }
    return true;
}

unsigned node_replicas_repair(unsigned budget)
{
    static uint8_t *buffer;
    if (!repair_wanted || budget == 0)
        return 0;
    if (buffer == NULL && (buffer = malloc(node_backend.cluster.block_bytes)) == NULL)
        return 0;
    unsigned repaired = 0;
    bool blocked = false;
    for (unsigned i = 0; i < PAGER_CLIENTS && repaired < budget; i++) {
        struct client *client = tables[i].client;
        for (uint32_t block = 0; client != NULL && block < client->block_count && repaired < budget;
             block++) {
            if (client->state[block] != BLOCK_ON_BACKEND || !client->has_copy[block])
                continue;
            unsigned live = node_replicas_live(client, block);
            if (live == 0 || live == client->replicas)
                continue;
            if (repair_block(client, block, buffer))
                repaired++;
            else
                blocked = true;
        }
    }
    if (repaired < budget)
        repair_wanted = blocked && repaired > 0; /* nothing left, or no room anywhere now */
    return repaired;
}

/* ---- a restarted pager takes a kept client's copies back ---- */

struct missing_copies {
    uint64_t copies[MEMNODE_MAX_NODES];  /* per directory number */
    uint64_t orphans[MEMNODE_MAX_NODES]; /* blocks on the backend left with no copy */
    uint64_t blocks_lost;                /* the same blocks, each counted once */
};

/* Forgets the block's copies on nodes the new negotiation did not find. */
static void forget_missing_copies(struct client *client, uint32_t block,
                                  struct missing_copies *missing)
{
    bool lost_on[MEMNODE_MAX_NODES] = {false};
    bool lost_one = false;
    for (unsigned r = 0; r < client->replicas; r++) {
        uint32_t *copy = copy_at(client, block, r);
        if (*copy == NODE_COPY_NONE || slot_of_copy(*copy) != PAGER_NO_SLOT)
            continue;
        uint32_t number = *copy >> NODE_COPY_BLOCK_BITS;
        *copy = NODE_COPY_NONE;
        missing->copies[number]++;
        lost_on[number] = lost_one = true;
    }
    if (!lost_one || node_replicas_live(client, block) > 0)
        return;
    if (client->state[block] != BLOCK_ON_BACKEND) {
        client->has_copy[block] = 0; /* resident: stored again when evicted */
        return;
    }
    for (unsigned number = 0; number < MEMNODE_MAX_NODES; number++)
        missing->orphans[number] += lost_on[number]; /* its fault reports it */
    missing->blocks_lost++;
}

static void report_missing_nodes(const struct client *client, const struct missing_copies *missing)
{
    node_backend.blocks_lost += missing->blocks_lost;
    for (unsigned number = 0; number < MEMNODE_MAX_NODES; number++) {
        if (missing->copies[number] == 0)
            continue;
        uint32_t id = node_directory_id(number << NODE_COPY_BLOCK_BITS);
        node_backend.copies_lost += missing->copies[number];
        repair_wanted = true;
        printf("pager: restart: memory node %u did not answer the new negotiation: %lu copies "
               "of pid %u's blocks were on it, %lu blocks have no copy left\n",
               id, (unsigned long)missing->copies[number], client->pid,
               (unsigned long)missing->orphans[number]);
        printf("@json {\"kind\":\"memnode_dead\",\"node\":%u,\"copies_lost\":%lu,"
               "\"blocks_without_copy\":%lu}\n",
               id, (unsigned long)missing->copies[number], (unsigned long)missing->orphans[number]);
    }
}

/* Marks the copies used in the cluster's placement, in order: how many were
 * marked before one could not be (all: the count). */
static uint64_t mark_copies(const struct replica_table *table, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++) {
        uint32_t slot = slot_of_copy(table->copies[i]);
        if (slot != PAGER_NO_SLOT && !memnode_placement_mark(&node_backend.cluster.placement, slot))
            return i;
    }
    return count;
}

static void unmark_copies(const struct replica_table *table, uint64_t count)
{
    for (uint64_t i = 0; i < count; i++) {
        uint32_t slot = slot_of_copy(table->copies[i]);
        if (slot != PAGER_NO_SLOT)
            memnode_slot_free(&node_backend.cluster, slot);
    }
}

long node_replicas_take_back(struct client *client)
{
    if (client->copies == NULL)
        return -E_INVALID;
    struct replica_table *table = table_take(client);
    if (table == NULL)
        return -E_BUSY;
    struct missing_copies missing = {0};
    for (uint32_t block = 0; block < client->block_count; block++)
        forget_missing_copies(client, block, &missing);
    uint64_t count = (uint64_t)client->block_count * client->replicas;
    uint64_t marked = mark_copies(table, count);
    if (marked < count) {
        printf("pager: restart: pid %u's kept copies overlap another's on the memory nodes\n",
               client->pid);
        unmark_copies(table, marked);
        table_give_back(table);
        return -E_INVALID;
    }
    report_missing_nodes(client, &missing);
    return 0;
}
