/* backend_node.c: the memory-node backend (seed 004 §3.4): other Formica
 * machines in the memory-node role, reached over the network card PCI shows
 * (virtio-net or e1000e) with the asynchronous protocol of
 * lib/net/memnode_client.c. Capacity is the sum over nodes; each block is
 * kept on `replicas` distinct nodes; stores run in the background (several
 * at once), a retrieve goes to a live replica and moves to another when its
 * node falls silent or dies. While the link is down the nodes are reported
 * unreachable and faults wait for it. */
#include <formica/memnode_client.h>
#include <formica/net.h>
#include "backend_internal.h"
#include "kept_tables.h"
#include "node_directory.h"
#include "node_replicas.h"
#include "pager.h"
#include <formica/refusal_log.h>
#include <formica/errors.h>
#include <formica/ica.h>
#include <formica/request.h>
#include <stdio.h>
#include <string.h>

#define NEGOTIATION_WAIT_US 60000000ull   /* for the first node: they may still be booting */
#define RENEGOTIATION_WAIT_US 10000000ull /* after a pager restart: the nodes are up */
#define FAILOVER_SILENCE_US 2000000ull    /* a retrieve moves to another replica after this */
#define PUMP_US 20000ull

struct node_state node_backend;

static uint64_t live_blocks(void)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < node_backend.cluster.node_count; i++)
        if (!node_backend.cluster.nodes[i].dead)
            total += node_backend.cluster.nodes[i].blocks;
    return total;
}

static unsigned live_nodes(void)
{
    unsigned live = 0;
    for (unsigned i = 0; i < node_backend.cluster.node_count; i++)
        live += !node_backend.cluster.nodes[i].dead;
    return live;
}

/* The card's link went down or came back: every live node is unreachable,
 * or reachable again (the transfers waiting for it go on). */
static void link_changed(struct memnode_cluster *cluster, bool up)
{
    for (unsigned i = 0; i < cluster->node_count; i++) {
        if (cluster->nodes[i].dead)
            continue;
        if (up)
            printf("pager: memory node %u reachable again: the network link is back\n",
                   cluster->nodes[i].node_id);
        else
            printf("pager: memory node %u unreachable: the network link is down (%u transfers "
                   "wait for it)\n",
                   cluster->nodes[i].node_id, cluster->nodes[i].active);
    }
}

/* A persistent node of this cluster came back with its blocks: they stay ours. */
static void node_restarted(struct memnode_cluster *cluster, unsigned node, uint64_t old_generation)
{
    struct memnode_node *n = &cluster->nodes[node];
    printf("pager: memory node %u restarted (generation %lu, was %lu): its NVM is this "
           "cluster's, its blocks are kept; %u transfers sent again\n",
           n->node_id, (unsigned long)n->generation, (unsigned long)old_generation, n->active);
    printf("@json {\"kind\":\"memnode_restart\",\"node\":%u,\"generation\":%lu,"
           "\"previous_generation\":%lu,\"kept\":true}\n",
           n->node_id, (unsigned long)n->generation, (unsigned long)old_generation);
}

/* Which path each node's blocks take: one-sided through its ivshmem BAR, or frames. */
static void report_paths(void)
{
    const struct memnode_cluster *cluster = &node_backend.cluster;
    for (unsigned i = 0; i < cluster->node_count; i++) {
        const struct memnode_node *n = &cluster->nodes[i];
        if (n->one_sided.on)
            printf("pager: node %u one-sided through ivshmem (BAR 2, %lu MiB): blocks stored and "
                   "retrieved by memcpy and the flush layer, tags written by the pager; the "
                   "node's CPU is not involved\n",
                   n->node_id, (unsigned long)(n->one_sided.bar_bytes >> 20));
        else if (cluster->one_sided_wanted)
            printf("pager: node %u two-sided (over the network): %s\n", n->node_id,
                   n->two_sided_why);
    }
}

/* Negotiates once, with the first client's block size: every node that
 * answers until MEMNODE_SETTLE_US after the first (or until `wanted` did)
 * is used. The nodes are numbered in the directory (a fresh one unless a
 * restarted pager takes kept copies back). */
static long open_cluster(uint32_t block_bytes, bool fresh_directory)
{
    if (node_backend.open)
        return node_backend.cluster.block_bytes == block_bytes ? 0 : -E_INVALID;
    long error = net_open();
    if (error != 0) {
        printf("pager: memory nodes unreachable: no usable network card (%s)\n", error_text(error));
        return error;
    }
    node_directory_open(kept_tables_node_directory(), fresh_directory);
    uint32_t known = node_directory_known();
    unsigned wanted = fresh_directory || known == 0 ? MEMNODE_MAX_NODES : known;
    error = memnode_cluster_open(&node_backend.cluster, wanted, block_bytes,
                                 fresh_directory ? NEGOTIATION_WAIT_US : RENEGOTIATION_WAIT_US);
    if (error == -E_NOT_FOUND && node_backend.cluster.node_count > 0)
        error = 0;
    if (error != 0 && node_backend.cluster.refused_nodes > 0)
        printf("pager: no memory node serves: %u refused their store (status 3)\n",
               node_backend.cluster.refused_nodes);
    else if (error != 0)
        printf("pager: no memory node answered: %s\n", error_text(error));
    if (error != 0) {
        return error;
    }
    node_backend.open = true;
    node_backend.cluster.node_died = node_replicas_node_died;
    node_backend.cluster.link_changed = link_changed;
    node_backend.cluster.node_restarted = node_restarted;
    node_directory_learn(&node_backend.cluster);
    printf("pager: %u memory node(s), %lu blocks of %u bytes in all, %u-byte fragments over %s\n",
           node_backend.cluster.node_count, (unsigned long)live_blocks(), block_bytes,
           node_backend.cluster.fragment_bytes, net_card_kind());
    report_paths();
    return 0;
}

/* Before the client's tables exist: the nodes, the replicas and the room. */
static long node_fits(const struct client *client)
{
    long error = open_cluster(client->block_bytes, true);
    if (error == -E_INVALID)
        printf("pager: memory nodes were negotiated for %u-byte blocks, not %u\n",
               node_backend.cluster.block_bytes, client->block_bytes);
    if (error != 0)
        return error;
    if (client->replicas > live_nodes()) {
        printf("pager: %u replicas asked, %u memory node(s) alive\n", client->replicas,
               live_nodes());
        return -E_INVALID;
    }
    uint64_t wanted = (uint64_t)client->block_count * client->replicas, live = live_blocks();
    uint64_t free_blocks =
        live > node_backend.promised_blocks ? live - node_backend.promised_blocks : 0;
    if (wanted > free_blocks) {
        if (refusal_may_print("pager", client->account))
            printf("pager: memory nodes too small: %lu blocks asked, %lu free\n",
                   (unsigned long)wanted, (unsigned long)free_blocks);
        return -E_NO_SPACE;
    }
    return 0;
}

static uint64_t node_capacity_bytes(void)
{
    return live_blocks() * node_backend.cluster.block_bytes;
}

static long node_attach(struct client *client)
{
    long error = node_fits(client);
    if (error != 0)
        return error;
    uint64_t wanted = (uint64_t)client->block_count * client->replicas;
    error = node_replicas_attach(client);
    if (error != 0)
        return error;
    node_backend.promised_blocks += wanted;
    return 0;
}

/* ---- operations in flight ---- */

static struct node_operation *operation_take(void)
{
    for (unsigned i = 0; i < NODE_OPERATIONS; i++)
        if (!node_backend.operations[i].used) {
            memset(&node_backend.operations[i], 0, sizeof(node_backend.operations[i]));
            node_backend.operations[i].used = true;
            return &node_backend.operations[i];
        }
    return NULL;
}

/* The last replica's store ended: the block is stored if any copy is. */
static void store_finished_if_last(struct node_operation *op)
{
    if (--op->outstanding > 0)
        return;
    ica_free(op->data_ica);
    long outcome = op->copies_ok > 0 ? 0 : -E_IO;
    if (outcome != 0)
        printf("pager: storing block %u of pid %u failed on every replica\n", op->block,
               op->client->pid);
    op->used = false;
    node_backend.stores_pending--;
    store_completed(op->client, op->block, outcome);
}

static void store_part_done(struct node_operation *op, uint64_t slot, long result)
{
    if (result == 0)
        op->copies_ok++;
    else
        node_replicas_copy_failed(op->client, op->block, slot);
    store_finished_if_last(op);
}

static void completion_arrived(const struct memnode_completion *done)
{
    struct node_operation *op = &node_backend.operations[done->tag];
    if (done->kind == MEMNODE_TRANSFER_STORE) {
        store_part_done(op, done->slot, done->result);
        return;
    }
    op->done = true;
    op->result = done->result;
}

/* Moves the network on for up to `timeout_us` and hands out what finished. */
static void pump(uint64_t timeout_us)
{
    memnode_poll(&node_backend.cluster, timeout_us);
    struct memnode_completion done;
    while (memnode_collect(&node_backend.cluster, &done))
        completion_arrived(&done);
}

/* Submits, pumping while every transfer entry is taken. */
static long submit_store(uint64_t slot, const void *data, uint64_t tag)
{
    for (;;) {
        long id = memnode_submit_store(&node_backend.cluster, slot, data, tag);
        if (id != -E_BUSY)
            return id;
        pump(PUMP_US);
    }
}

/* Stores the block on each of its replicas at once; the data ICA is freed
 * and store_completed() called when the last copy is acknowledged. */
static long node_store(struct client *client, uint32_t block, uint64_t data_ica)
{
    long error = node_replicas_place(client, block);
    if (error != 0) {
        printf("pager: block %u of pid %u cannot be stored: no live memory node has room\n", block,
               client->pid);
        return error; /* the caller keeps the data ICA and maps it back */
    }
    struct node_operation *op = operation_take();
    if (op == NULL)
        return -E_BUSY;
    *op = (struct node_operation){.used = true,
                                  .kind = MEMNODE_TRANSFER_STORE,
                                  .client = client,
                                  .block = block,
                                  .data_ica = data_ica,
                                  .outstanding = 1};
    node_backend.stores_pending++; /* outstanding 1: held until every copy is submitted */
    uint64_t tag = (uint64_t)(op - node_backend.operations);
    unsigned submitted = 0;
    for (unsigned r = 0; r < client->replicas; r++) {
        uint32_t slot = node_replicas_slot(client, block, r);
        long id = slot == PAGER_NO_SLOT
                      ? -E_IO
                      : submit_store(slot, (const void *)ica_address(data_ica), tag);
        if (id >= 0) {
            op->outstanding++;
            submitted++;
        } else if (slot != PAGER_NO_SLOT) {
            node_replicas_copy_failed(client, block, slot);
        }
    }
    if (submitted == 0 && op->outstanding == 1) {
        op->used = false;
        node_backend.stores_pending--;
        return -E_IO; /* every replica's node is dead: the caller keeps the data ICA */
    }
    store_finished_if_last(op);
    return 0;
}

/* Starts a retrieve from replica `replica` (or the next live one): the
 * transfer id, or -E_IO when no replica is left. */
static long start_retrieve(struct node_operation *op, void *data)
{
    for (; op->replica < op->client->replicas; op->replica++) {
        uint32_t slot = node_replicas_slot(op->client, op->block, op->replica);
        if (slot == PAGER_NO_SLOT)
            continue;
        long id;
        while ((id = memnode_submit_retrieve(&node_backend.cluster, slot, data,
                                             (uint64_t)(op - node_backend.operations))) == -E_BUSY)
            pump(PUMP_US);
        if (id >= 0)
            return id;
    }
    return -E_IO;
}

/* A silent node: the same block from the next replica whose node answers. */
static void fail_over_if_silent(struct node_operation *op, long id)
{
    if (memnode_transfer_silence(&node_backend.cluster, id) < FAILOVER_SILENCE_US)
        return;
    for (unsigned r = op->replica + 1; r < op->client->replicas; r++) {
        uint32_t slot = node_replicas_slot(op->client, op->block, r);
        if (slot != PAGER_NO_SLOT && memnode_redirect(&node_backend.cluster, id, slot) == 0) {
            printf("pager: block %u of pid %u: replica %u is silent, reading replica %u\n",
                   op->block, op->client->pid, op->replica, r);
            op->replica = r;
            return;
        }
    }
}

/* Starts fetching `block` into the data ICA: a handle for node_fetch_finish. */
static long node_fetch_start(struct client *client, uint32_t block, uint64_t data_ica)
{
    struct node_operation *op = operation_take();
    if (op == NULL)
        return -E_BUSY;
    *op = (struct node_operation){.used = true,
                                  .kind = MEMNODE_TRANSFER_RETRIEVE,
                                  .client = client,
                                  .block = block,
                                  .data_ica = data_ica};
    op->transfer = start_retrieve(op, (void *)ica_address(data_ica));
    node_backend.retrieves_pending++;
    return op - node_backend.operations;
}

/* Waits for the fetch: a dead replica's node sends it to the next replica,
 * a silent one too after FAILOVER_SILENCE_US. 0, or -E_IO when no copy is left. */
static long node_fetch_finish(long handle)
{
    struct node_operation *op = &node_backend.operations[handle];
    void *data = (void *)ica_address(op->data_ica);
    long id = op->transfer;
    while (id >= 0) {
        if (!op->done) {
            pump(PUMP_US);
            if (!op->done)
                fail_over_if_silent(op, id);
            continue;
        }
        if (op->result == 0)
            break;
        op->done = false; /* that replica's node died: the next one */
        op->replica++;
        id = start_retrieve(op, data);
    }
    op->used = false;
    node_backend.retrieves_pending--;
    if (id < 0)
        node_replicas_report_lost(op->client, op->block);
    return id < 0 ? -E_IO : 0;
}

static bool node_fetch_ready(long handle)
{
    return node_backend.operations[handle].done;
}

static long node_retrieve(struct client *client, uint32_t block, uint64_t data_ica)
{
    long handle = node_fetch_start(client, block, data_ica);
    return handle < 0 ? handle : node_fetch_finish(handle);
}

static long node_wait_one(void)
{
    if (node_backend.stores_pending == 0)
        return -E_NOT_FOUND;
    uint64_t before = node_backend.stores_pending;
    while (node_backend.stores_pending == before)
        pump(PUMP_US);
    return 0;
}

static void node_detach(struct client *client, bool keep_contents)
{
    (void)keep_contents; /* memory nodes keep nothing across a client's end */
    node_replicas_detach(client);
    node_backend.promised_blocks -= (uint64_t)client->block_count * client->replicas;
}

/* A kept client after a pager restart: the nodes are negotiated again (a
 * node keeps its blocks across a new session), the kept copies are found
 * by node id and marked used; copies on nodes that did not answer are lost
 * copies, as after a node's death. */
static long node_reattach(struct client *client)
{
    long error = open_cluster(client->block_bytes, false);
    if (error == -E_INVALID)
        printf("pager: memory nodes were negotiated for %u-byte blocks, not %u\n",
               node_backend.cluster.block_bytes, client->block_bytes);
    if (error == 0)
        error = node_replicas_take_back(client);
    if (error == 0)
        node_backend.promised_blocks += (uint64_t)client->block_count * client->replicas;
    return error;
}

/* Retrieves still on the network (a finished one waits for its fault). */
static bool retrieves_moving(void)
{
    for (unsigned i = 0; i < NODE_OPERATIONS; i++)
        if (node_backend.operations[i].used &&
            node_backend.operations[i].kind == MEMNODE_TRANSFER_RETRIEVE &&
            !node_backend.operations[i].done)
            return true;
    return false;
}

/* Work for the main loop between requests. While it lasts the pager polls
 * (an application on its core waits), so it ends as soon as the network is idle. */
bool node_backend_busy(void)
{
    return node_backend.open &&
           (node_backend.stores_pending > 0 || retrieves_moving() || node_replicas_need_repair());
}

/* Nothing has arrived: the main loop may sleep until the next frame. */
bool node_backend_may_sleep(void)
{
    return node_backend.open && net_ready_to_sleep();
}

/* A fault's read-ahead and stores are submitted as it goes; their requests leave before the
 * pager answers, so the node works on them while the process runs (docs/pager.md, Session 23). */
void node_backend_send_submitted(void)
{
    if (node_backend.open)
        memnode_send_pending(&node_backend.cluster);
}

/* Between requests: stores move on; once none is in flight, a few blocks
 * that lost a copy are copied to a live node. */
void node_backend_progress(void)
{
    if (!node_backend.open)
        return;
    memnode_watch_link(&node_backend.cluster);
    if (node_backend.stores_pending > 0 || retrieves_moving())
        pump(0); /* what has arrived: the main loop sleeps until more comes, or a request */
    else
        node_replicas_repair(4);
}

void backend_node_report(void)
{
    if (!node_backend.open)
        return;
    const struct memnode_cluster *cluster = &node_backend.cluster;
    for (unsigned i = 0; i < cluster->node_count; i++) {
        const struct memnode_node *n = &cluster->nodes[i];
        printf("@json {\"kind\":\"pagernode\",\"node\":%u,\"alive\":%s,\"reachable\":%s,"
               "\"blocks\":%lu,"
               "\"free_blocks\":%lu,\"stores\":%lu,\"retrieves\":%lu,\"retransmissions\":%lu,"
               "\"probes\":%lu,\"pongs\":%lu,\"in_flight\":%u,\"silent_ms\":%lu,"
               "\"one_sided\":%s,\"one_sided_stores\":%lu,\"one_sided_retrieves\":%lu,"
               "\"one_sided_corrupt\":%lu}\n",
               n->node_id, n->dead ? "false" : "true",
               n->dead || cluster->link_down ? "false" : "true", n->blocks,
               memnode_node_free_blocks(cluster, i), n->stores, n->retrieves, n->retransmissions,
               n->probes, n->pongs, n->active,
               memnode_liveness_silence(&n->liveness, net_now_us()) / 1000,
               n->one_sided.on ? "true" : "false", n->one_sided.stores, n->one_sided.retrieves,
               n->one_sided.corrupt);
    }
    printf("@json {\"kind\":\"pagernodes\",\"nic\":\"%s\",\"fragment_bytes\":%u,"
           "\"copies_lost\":%lu,\"copies_repaired\":%lu,\"blocks_lost\":%lu,\"peak_transfers\":%lu,"
           "\"retransmissions\":%lu,\"link_downs\":%lu}\n",
           net_card_kind(), cluster->fragment_bytes, node_backend.copies_lost,
           node_backend.copies_repaired, node_backend.blocks_lost, cluster->stats.peak_in_flight,
           cluster->stats.retransmissions, cluster->link_downs);
}

const struct backend backend_node = {
    .name = "node",
    .kind = PAGER_BACKEND_NODE,
    .fits = node_fits,
    .capacity_bytes = node_capacity_bytes,
    .attach = node_attach,
    .store = node_store,
    .retrieve = node_retrieve,
    .fetch_start = node_fetch_start,
    .fetch_finish = node_fetch_finish,
    .fetch_ready = node_fetch_ready,
    .wait_one = node_wait_one,
    .detach = node_detach,
    .reattach = node_reattach,
};
