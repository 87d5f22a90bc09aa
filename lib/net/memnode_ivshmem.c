/* memnode_ivshmem.c: the client's one-sided path to memory nodes: the
 * ivshmem-plain devices (1af4:1110) whose BAR 2 is a node's NVDIMM file
 * (build/run --memnode-ivshmem), mapped write-back, and each negotiated
 * node matched to the BAR that holds its store (memnode_one_sided.c checks
 * the identity, layout and generation); the others stay two-sided. */
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/memnode_client.h>
#include <formica/pci.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define IVSHMEM_VENDOR 0x1af4
#define IVSHMEM_DEVICE 0x1110
#define SHARED_BAR 2

struct shared_bar {
    struct pci_function function;
    uint64_t physical, bytes;
    uint8_t *base;
    bool taken;
};

static struct shared_bar bars[MEMNODE_MAX_NODES];
static unsigned bar_count;
static bool bars_looked_for;

bool memnode_ivshmem_wanted(void)
{
    char text[8] = "";
    kernel_option(MEMNODE_IVSHMEM_OPTION, text, sizeof text);
    return strcmp(text, "on") == 0;
}

static void map_bar(const struct pci_function *function)
{
    struct shared_bar *bar = &bars[bar_count];
    bool is_io;
    bar->function = *function;
    bar->physical = pci_bar(function, SHARED_BAR, &is_io);
    bar->bytes = is_io ? 0 : pci_bar_size(function, SHARED_BAR);
    if (bar->physical == 0 || bar->bytes == 0) {
        printf("memnode client: ivshmem %u:%u.%u has no memory BAR 2: not used\n", function->bus,
               function->device, function->function);
        return;
    }
    pci_enable(function);
    long error = device_map_whole(bar->physical, bar->bytes, &bar->base);
    if (error != 0) {
        printf("memnode client: ivshmem %u:%u.%u: BAR 2 at 0x%lx (%lu MiB) cannot be mapped: %s\n",
               function->bus, function->device, function->function, bar->physical, bar->bytes >> 20,
               error_text(error));
        return;
    }
    bar_count++;
}

static void find_bars(void)
{
    if (bars_looked_for)
        return;
    bars_looked_for = true;
    struct pci_function function;
    for (unsigned index = 0; bar_count < MEMNODE_MAX_NODES &&
                             pci_find_device(IVSHMEM_VENDOR, IVSHMEM_DEVICE, index, &function);
         index++)
        map_bar(&function);
}

static void say_two_sided(struct memnode_node *node, const char *why)
{
    snprintf(node->two_sided_why, sizeof node->two_sided_why, "%s", why);
    printf("memnode client: node %u stays two-sided (over the network): %s\n", node->node_id, why);
}

static void say_one_sided(const struct memnode_node *node, const struct shared_bar *bar)
{
    printf("memnode client: node %u one-sided through ivshmem %u:%u.%u (BAR 2 at 0x%lx, %lu MiB, "
           "generation %lu): blocks stored and retrieved by memcpy, tags written here\n",
           node->node_id, bar->function.bus, bar->function.device, bar->function.function,
           bar->physical, bar->bytes >> 20, (unsigned long)node->generation);
}

/* The BAR that holds the node's store, checked against its reply. */
static void attach_node(struct memnode_node *node)
{
    node->shared_bar = -1;
    node->one_sided.on = false;
    if (!node->has_layout) {
        say_two_sided(node, "it gave no NVM layout (its store is in DRAM, or refused)");
        return;
    }
    if (bar_count == 0) {
        say_two_sided(node, "no ivshmem device (build/run --memnode-ivshmem attaches one)");
        return;
    }
    char why[96] = "";
    for (unsigned i = 0; i < bar_count; i++) {
        if (bars[i].taken)
            continue;
        if (memnode_one_sided_open(&node->one_sided, bars[i].base, bars[i].bytes, &node->layout,
                                   &node->negotiated, why, sizeof why)) {
            bars[i].taken = true;
            node->one_sided.physical = bars[i].physical;
            node->shared_bar = (int)i;
            say_one_sided(node, &bars[i]);
            return;
        }
    }
    char text[96];
    snprintf(text, sizeof text, "no ivshmem BAR matches its store (%s)", why);
    say_two_sided(node, text);
}

void memnode_ivshmem_attach(struct memnode_cluster *cluster)
{
    find_bars();
    for (unsigned i = 0; i < bar_count; i++)
        bars[i].taken = false; /* a cluster opened again in this process matches afresh */
    for (unsigned i = 0; i < cluster->node_count; i++)
        attach_node(&cluster->nodes[i]);
}

bool memnode_ivshmem_recheck(struct memnode_cluster *cluster, unsigned node)
{
    struct memnode_node *n = &cluster->nodes[node];
    if (n->shared_bar < 0)
        return false;
    struct shared_bar *bar = &bars[n->shared_bar];
    char why[96];
    struct memnode_one_sided before = n->one_sided;
    if (n->has_layout && memnode_one_sided_open(&n->one_sided, bar->base, bar->bytes, &n->layout,
                                                &n->negotiated, why, sizeof why)) {
        n->one_sided.physical = bar->physical;
        n->one_sided.stores = before.stores;
        n->one_sided.retrieves = before.retrieves;
        n->one_sided.corrupt = before.corrupt;
        say_one_sided(n, bar);
        return true;
    }
    if (!n->has_layout)
        snprintf(why, sizeof why, "its new reply gave no NVM layout");
    bar->taken = false;
    n->shared_bar = -1;
    char text[96];
    snprintf(text, sizeof text, "after its restart: %s", why);
    say_two_sided(n, text);
    return false;
}
