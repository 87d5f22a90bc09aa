/* backend_node.c: the memory-node backend (seed 004 §3.4: Negotiation, Store,
 * Retrieve over the network). Not wired yet: it needs the virtio-net driver's
 * request interface (servers/net/); until then attach says -E_NOT_FOUND. */
#include "pager.h"
#include <formica/errors.h>
#include <stdio.h>

static long node_attach(struct client *client)
{
    (void)client;
    printf("pager: memory-node backend unavailable (no network driver interface yet)\n");
    return -E_NOT_FOUND;
}

static long node_transfer(struct client *client, uint32_t block, uint64_t data_ica)
{
    (void)client, (void)block, (void)data_ica;
    return -E_IO;
}

static long node_wait_one(void)
{
    return -E_NOT_FOUND;
}

static void node_detach(struct client *client, bool keep_contents)
{
    (void)client, (void)keep_contents;
}

const struct backend backend_node = {
    .name = "node",
    .kind = PAGER_BACKEND_NODE,
    .attach = node_attach,
    .store = node_transfer,
    .retrieve = node_transfer,
    .wait_one = node_wait_one,
    .detach = node_detach,
};
