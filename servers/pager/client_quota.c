/* client_quota.c: the pager spends its clients' memory, never its own
 * (docs/authority.md). A region's block tables are checked against the
 * pager's own limit and charged to the client's quota account before they
 * are allocated (SYS_ACCOUNT_CHARGE), and given back at PAGER_CLEANUP; the
 * frames mapped into a client count in its account, and a map refused past
 * the account's limit evicts one of that client's own blocks instead. */
#include "kept_tables.h"
#include "pager.h"
#include <formica/refusal_log.h>
#include <formica/user.h>
#include <stdio.h>

/* Bytes of the pager's heap the client's tables take: the policy links, and
 * the block states, slots, checksums and replica table unless they live in
 * the kept region. */
uint64_t client_table_bytes(const struct client *client)
{
    uint64_t per_block = sizeof(struct policy_link);
    if (!kept_tables_would_attach(client)) {
        per_block += 2 * sizeof(uint8_t) + sizeof(uint32_t) + sizeof(uint64_t);
        if (client->backend->kind == PAGER_BACKEND_NODE)
            per_block += (uint64_t)client->replicas * sizeof(uint32_t);
    }
    return per_block * client->block_count;
}

long client_charge_tables(struct client *client)
{
    uint64_t bytes = client_table_bytes(client);
    if (bytes > PAGER_TABLE_MAX_BYTES) {
        if (refusal_may_print("pager", client->account))
            printf("pager: pid %u (uid %u) refused: a region of %lu MiB in %u-byte blocks needs "
                   "%lu KiB of block tables, more than the pager's %u KiB per client\n",
                   client->pid, client->uid, client->bytes >> 20, client->block_bytes, bytes >> 10,
                   PAGER_TABLE_MAX_BYTES >> 10);
        return -E_TOO_BIG;
    }
    long charged = account_charge(client->pid, (int64_t)bytes);
    if (charged < 0) {
        if (refusal_may_print("pager", client->account))
            printf("pager: pid %u (uid %u) refused: its block tables (%lu KiB) do not fit its "
                   "account's memory quota (%s)\n",
                   client->pid, client->uid, bytes >> 10, error_text(charged));
        return charged;
    }
    client->charged_bytes = bytes;
    return 0;
}

void client_release_charge(struct client *client)
{
    if (client->charged_bytes != 0)
        account_charge(client->pid, -(int64_t)client->charged_bytes);
    client->charged_bytes = 0;
}

/* Fewer resident blocks than this and the client cannot run: one x86
 * instruction may touch several blocks (pager.h's MIN_RESIDENT_BLOCKS). */
static long quota_exhausted(struct client *client, uint32_t block)
{
    printf("pager: pid %u's account is at its memory quota with %u blocks of its region "
           "resident: block %u (address 0x%lx) cannot be mapped; the process ends\n",
           client->pid, policy_resident_count(&client->policy), block,
           block_address(client, block));
    printf("@json {\"kind\":\"pager_quota\",\"pid\":%u,\"block\":%u,\"resident_blocks\":%u,"
           "\"ended\":true}\n",
           client->pid, block, policy_resident_count(&client->policy));
    return -E_QUOTA;
}

/* The account holds `resident` blocks and no more: the limit follows, so the
 * next faults make room before they map. */
static void lower_limit(struct client *client, uint32_t resident)
{
    if (resident >= client->limit_blocks)
        return;
    if (refusal_may_print("pager", client->account))
        printf("pager: pid %u's account is at its memory quota: its limit is now %u blocks "
               "(was %u)\n",
               client->pid, resident, client->limit_blocks);
    client->limit_blocks = resident;
}

long client_map_block(struct client *client, uint32_t block, uint64_t data_ica, bool may_evict)
{
    uint64_t address = block_address(client, block);
    for (;;) {
        long error = pager_map(client->pid, address, client->block_bytes, data_ica);
        if (error != -E_QUOTA || !may_evict)
            return error;
        uint32_t resident = policy_resident_count(&client->policy);
        if (resident < PAGER_MIN_RESIDENT_BLOCKS)
            return quota_exhausted(client, block);
        lower_limit(client, resident);
        error = evict_one(client);
        if (error != 0)
            return error;
    }
}
