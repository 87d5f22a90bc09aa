/* test_pager_policy.c: the pager's replacement policies (servers/pager/policy.c)
 * on recorded access traces with a simulated MMU accessed bit (Fig. 3's
 * pseudo-LRU, FIFO, drop hints, in-flight bound), first-free space, the
 * NVM layout (key users, block checksums), the slots' per-account share and
 * the swap file's size option (pager_swap_mib). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "client_share.h"
#include "nvm_format.h"
#include "policy.h"
#include "space.h"
#include "swap_size.h"
#include <formica/errors.h>
#include <formica/pager.h>

#define BLOCKS 64

static struct policy_state policy;
static struct policy_link links[BLOCKS];
static bool accessed[BLOCKS];
static uint32_t scanned[4 * BLOCKS]; /* blocks referenced() was asked about, in order */
static uint32_t scan_count;

/* The simulated MMU: test-and-clear of the block's accessed bit. */
static bool referenced(void *context, uint32_t block)
{
    (void)context;
    scanned[scan_count++ % (4 * BLOCKS)] = block;
    bool was = accessed[block];
    accessed[block] = false;
    return was;
}

static void start(uint32_t kind)
{
    memset(accessed, 0, sizeof(accessed));
    scan_count = 0;
    policy_init(&policy, kind, BLOCKS, links);
}

/* Makes blocks 0..count-1 resident in order, each referenced once. */
static void fill(uint32_t count)
{
    for (uint32_t block = 0; block < count; block++) {
        policy_add(&policy, block);
        accessed[block] = true;
    }
}

static uint32_t victim(void)
{
    return policy_choose_victim(&policy, referenced, NULL);
}

static void test_lru_all_referenced_takes_active_head(void **state)
{
    (void)state;
    start(PAGER_POLICY_LRU);
    fill(4);
    /* Every block was referenced: none goes inactive, the bits are cleared,
     * and Fig. 3 falls back to active_list.remove_head(). */
    assert_int_equal(victim(), 0);
    assert_int_equal(scan_count, 4);
    for (uint32_t block = 0; block < 4; block++)
        assert_false(accessed[block]);
    /* Next time the cleared blocks all move to the inactive list; the first goes. */
    assert_int_equal(victim(), 1);
    assert_int_equal(policy.queues[POLICY_LIST_INACTIVE].count, 2);
    assert_int_equal(policy_resident_count(&policy), 2);
}

static void test_lru_referenced_inactive_block_returns_to_active(void **state)
{
    (void)state;
    start(PAGER_POLICY_LRU);
    fill(4);
    assert_int_equal(victim(), 0);
    assert_int_equal(victim(), 1); /* 2 and 3 are inactive now */
    accessed[2] = true;            /* used after it went inactive */
    assert_int_equal(victim(), 3);
    assert_int_equal(links[2].list, POLICY_LIST_ACTIVE);
    /* The inactive list is empty again: 2 (cleared) is moved and taken. */
    assert_int_equal(victim(), 2);
    assert_int_equal(victim(), POLICY_NONE);
}

static void test_lru_keeps_recently_used_blocks(void **state)
{
    (void)state;
    start(PAGER_POLICY_LRU);
    fill(6);
    assert_int_equal(victim(), 0); /* clears every bit */
    accessed[1] = accessed[4] = true;
    /* 2, 3, 5 go inactive in list order; 1 and 4 stay active. */
    assert_int_equal(victim(), 2);
    assert_int_equal(victim(), 3);
    assert_int_equal(victim(), 5);
    assert_int_equal(links[1].list, POLICY_LIST_ACTIVE);
    assert_int_equal(links[4].list, POLICY_LIST_ACTIVE);
}

static void test_swapped_in_block_goes_to_active_tail(void **state)
{
    (void)state;
    start(PAGER_POLICY_LRU);
    fill(3);
    assert_int_equal(victim(), 0);
    policy_add(&policy, 0); /* swapped back in */
    assert_int_equal(policy.queues[POLICY_LIST_ACTIVE].tail, 0);
    assert_int_equal(links[0].list, POLICY_LIST_ACTIVE);
}

static void test_fifo_ignores_referenced_bits(void **state)
{
    (void)state;
    start(PAGER_POLICY_FIFO);
    fill(4);
    accessed[0] = true;
    assert_int_equal(victim(), 0);
    assert_int_equal(victim(), 1);
    policy_add(&policy, 0);
    assert_int_equal(victim(), 2);
    assert_int_equal(victim(), 3);
    assert_int_equal(victim(), 0);
    assert_int_equal(victim(), POLICY_NONE);
    assert_int_equal(scan_count, 0);
}

static void test_drop_hint_is_evicted_first(void **state)
{
    (void)state;
    for (uint32_t kind = PAGER_POLICY_LRU; kind <= PAGER_POLICY_FIFO; kind++) {
        start(kind);
        fill(5);
        policy_hint_drop(&policy, 3);
        policy_hint_drop(&policy, 1);
        policy_hint_drop(&policy, 40); /* not resident: ignored */
        assert_int_equal(victim(), 3);
        assert_int_equal(victim(), 1);
        assert_int_equal(scan_count, 0);
        assert_int_equal(policy_resident_count(&policy), 3);
    }
}

static void test_remove_takes_block_off_every_list(void **state)
{
    (void)state;
    start(PAGER_POLICY_LRU);
    fill(3);
    policy_hint_drop(&policy, 2);
    policy_remove(&policy, 2);
    policy_remove(&policy, 0);
    assert_false(policy_is_resident(&policy, 2));
    assert_int_equal(policy_resident_count(&policy), 1);
    assert_int_equal(victim(), 1);
}

/* Replays a trace of block references with room for `capacity` resident
 * blocks; returns the number of swap-ins (first touches included). */
static uint32_t replay(uint32_t kind, const uint32_t *trace, uint32_t length, uint32_t capacity,
                       uint32_t *evicted, uint32_t *evicted_count)
{
    start(kind);
    uint32_t swap_ins = 0;
    *evicted_count = 0;
    for (uint32_t i = 0; i < length; i++) {
        uint32_t block = trace[i];
        if (!policy_is_resident(&policy, block)) {
            if (policy_resident_count(&policy) == capacity)
                evicted[(*evicted_count)++] = victim();
            policy_add(&policy, block);
            swap_ins++;
        }
        accessed[block] = true;
    }
    return swap_ins;
}

static void test_trace_hot_block_survives_under_lru_only(void **state)
{
    (void)state;
    /* A scan over blocks 1..20 with block 0 referenced between every step. */
    uint32_t trace[64], length = 0, evicted[64], count;
    for (uint32_t block = 1; block <= 20; block++) {
        trace[length++] = 0;
        trace[length++] = block;
    }
    uint32_t lru = replay(PAGER_POLICY_LRU, trace, length, 4, evicted, &count);
    /* Only the first eviction, when every bit is set, may take block 0
     * (Fig. 3's active_list.remove_head()); later the scan protects it. */
    for (uint32_t i = 1; i < count; i++)
        assert_int_not_equal(evicted[i], 0);
    uint32_t fifo = replay(PAGER_POLICY_FIFO, trace, length, 4, evicted, &count);
    assert_true(fifo > lru);
    assert_int_equal(evicted[0], 0); /* FIFO throws the hot block out first */
}

static void test_trace_eviction_order_recorded(void **state)
{
    (void)state;
    /* Recorded trace: 0 1 2 3 | 0 | 4 5 6. Capacity 4. */
    static const uint32_t trace[] = {0, 1, 2, 3, 0, 4, 5, 6};
    uint32_t evicted[8], count;
    replay(PAGER_POLICY_LRU, trace, 8, 4, evicted, &count);
    assert_int_equal(count, 3);
    /* 4: all bits set -> active head 0 goes (bits cleared); 5: 1 2 3 go inactive,
     * 1 is taken; 6: 2 is taken (4 stays active, referenced). */
    assert_int_equal(evicted[0], 0);
    assert_int_equal(evicted[1], 1);
    assert_int_equal(evicted[2], 2);
    replay(PAGER_POLICY_FIFO, trace, 8, 4, evicted, &count);
    assert_int_equal(evicted[0], 0);
    assert_int_equal(evicted[1], 1);
    assert_int_equal(evicted[2], 2);
}

static void test_inflight_bound(void **state)
{
    (void)state;
    struct inflight_bound bound;
    inflight_init(&bound, 4 << 20);
    assert_false(inflight_must_wait(&bound, 8 << 20)); /* nothing in flight: always go */
    inflight_start(&bound, 1 << 20);
    inflight_start(&bound, 2 << 20);
    assert_false(inflight_must_wait(&bound, 1 << 20)); /* exactly at the limit */
    inflight_start(&bound, 1 << 20);
    assert_true(inflight_must_wait(&bound, 1 << 20));
    inflight_finish(&bound, 2 << 20);
    assert_false(inflight_must_wait(&bound, 1 << 20));
    assert_int_equal(bound.peak, 4 << 20);
    inflight_finish(&bound, 8 << 20); /* never below zero */
    assert_int_equal(bound.bytes, 0);
}

static void test_hint_block_range(void **state)
{
    (void)state;
    const uint64_t base = PAGER_REGION_BASE, bytes = 1 << 20;
    uint32_t first, last;
    assert_true(policy_block_range(base, bytes, 65536, base + 100, 65536, &first, &last));
    assert_int_equal(first, 0);
    assert_int_equal(last, 1);
    assert_true(policy_block_range(base, bytes, 65536, base - 4096, 8192, &first, &last));
    assert_int_equal(first, 0);
    assert_int_equal(last, 0);
    assert_true(policy_block_range(base, bytes, 65536, base + bytes - 1, 1000, &first, &last));
    assert_int_equal(first, 15);
    assert_int_equal(last, 15);
    assert_false(policy_block_range(base, bytes, 65536, base + bytes, 10, &first, &last));
    assert_false(policy_block_range(base, bytes, 65536, base, 0, &first, &last));
    assert_true(policy_block_range(base, bytes, 4096, base, UINT64_MAX, &first, &last));
    assert_int_equal(last, 255);
}

static void test_space_first_free_aligned(void **state)
{
    (void)state;
    uint64_t bits[2];
    struct space space;
    space_init(&space, bits, 100);
    assert_int_equal(space_take(&space, 1), 0);
    assert_int_equal(space_take(&space, 4), 4); /* aligned to 4 */
    assert_int_equal(space_take(&space, 1), 1);
    space_give(&space, 0, 1);
    assert_int_equal(space_take(&space, 1), 0);            /* the lowest free again */
    assert_int_equal(space_take(&space, 64), POLICY_NONE); /* 64..127 passes the end */
    assert_true(space_mark(&space, 8, 8));
    assert_false(space_mark(&space, 10, 1));
    assert_int_equal(space_take(&space, 8), 16);
    assert_int_equal(space_free_units(&space), 100 - 1 - 4 - 1 - 8 - 8);
}

static void test_nvm_layout_marks_persistent_blocks(void **state)
{
    (void)state;
    static uint8_t nvm_area[64 * NVM_UNIT_BYTES];
    struct nvm_header *header = (struct nvm_header *)nvm_area;
    assert_false(nvm_header_valid(header, sizeof(nvm_area)));
    nvm_format(header, sizeof(nvm_area));
    assert_true(nvm_header_valid(header, sizeof(nvm_area)));
    assert_false(nvm_header_valid(header, 2 * sizeof(nvm_area)));
    header->entries[3] = (struct nvm_entry){42, 8192, 4, 2, 1, 1000, 0};
    uint32_t *map = nvm_map_of(nvm_area, &header->entries[3]);
    map[0] = 4, map[1] = NVM_NO_UNIT, map[2] = 8, map[3] = 60 + 4; /* last: off the end */
    uint64_t bits[1];
    struct space space;
    space_init(&space, bits, 64);
    assert_int_equal(nvm_mark_used(nvm_area, header, &space), 1);
    assert_int_equal(map[3], NVM_NO_UNIT);
    assert_int_equal(space.used, 1 + 1 + 2 + 2);
    assert_int_equal(nvm_find_key(header, 42), 3);
    assert_int_equal(nvm_find_key(header, 0), -1);
}

static void test_nvm_map_keeps_checksums_after_the_units(void **state)
{
    (void)state;
    assert_int_equal(nvm_sums_offset(3), 16); /* 12 bytes of units, aligned to 8 */
    assert_int_equal(nvm_map_bytes(3), 16 + 3 * 8);
    static uint8_t nvm_area[64 * NVM_UNIT_BYTES];
    struct nvm_header *header = (struct nvm_header *)nvm_area;
    nvm_format(header, sizeof(nvm_area));
    /* 1024 blocks: 4 KiB of units and 8 KiB of checksums do not fit one map unit */
    header->entries[0] = (struct nvm_entry){.key = 5,
                                            .block_bytes = 4096,
                                            .block_count = 1024,
                                            .map_unit = 1,
                                            .map_units = 1,
                                            .uid = 2001};
    memset(nvm_map_of(nvm_area, &header->entries[0]), 0xff, NVM_UNIT_BYTES);
    uint64_t bits[1];
    struct space space;
    space_init(&space, bits, 64);
    assert_int_equal(nvm_mark_used(nvm_area, header, &space), 1);
    assert_int_equal(header->entries[0].key, 0); /* dropped, not trusted */
    header->entries[1] = (struct nvm_entry){.key = 6,
                                            .block_bytes = 4096,
                                            .block_count = 2,
                                            .map_unit = 4,
                                            .map_units = 1,
                                            .uid = 2001};
    uint32_t *map = nvm_map_of(nvm_area, &header->entries[1]);
    uint64_t *sums = nvm_sums_of(nvm_area, &header->entries[1]);
    assert_ptr_equal((uint8_t *)sums, (uint8_t *)map + 8);
    map[0] = 8, map[1] = NVM_NO_UNIT, sums[0] = 0x1234;
    space_init(&space, bits, 64);
    assert_int_equal(nvm_mark_used(nvm_area, header, &space), 0);
    assert_int_equal(header->entries[1].uid, 2001);
    assert_int_equal(sums[0], 0x1234);
}

static void test_client_slots_are_shared_per_account(void **state)
{
    (void)state;
    uint32_t accounts[16];
    for (int i = 0; i < 4; i++)
        accounts[i] = 50; /* account 50 holds its quarter */
    assert_int_equal(client_share_allows(accounts, 4, 16, 50), -E_QUOTA);
    assert_int_equal(client_share_allows(accounts, 3, 16, 50), 0);
    assert_int_equal(client_share_allows(accounts, 4, 16, 60), 0);
    for (int i = 4; i < 12; i++)
        accounts[i] = 60 + (uint32_t)i / 4; /* two more accounts, 4 each: 12 client slots */
    assert_int_equal(client_share_allows(accounts, 12, 16, 99), -E_QUOTA); /* the reserve */
    assert_int_equal(client_share_allows(accounts, 12, 16, CLIENT_SHARE_RESERVE_ACCOUNT), 0);
    for (int i = 12; i < 16; i++)
        accounts[i] = CLIENT_SHARE_RESERVE_ACCOUNT;
    assert_int_equal(client_share_allows(accounts, 16, 16, CLIENT_SHARE_RESERVE_ACCOUNT), -E_BUSY);
    /* init's own clients do not count against the others' share */
    assert_int_equal(client_share_allows(accounts + 12, 4, 16, 70), 0);
}

static void test_an_account_claims_at_most_three_quarters_of_a_backend(void **state)
{
    (void)state;
    uint64_t total = 40u << 20; /* the swap file */
    assert_int_equal(client_share_backend(0, 30u << 20, total, 50), 0);
    assert_int_equal(client_share_backend(0, (30u << 20) + 4096, total, 50), -E_QUOTA);
    assert_int_equal(client_share_backend(20u << 20, 10u << 20, total, 50), 0);
    assert_int_equal(client_share_backend(20u << 20, 11u << 20, total, 50), -E_QUOTA);
    assert_int_equal(client_share_backend(31u << 20, 0, total, 50), -E_QUOTA);
    assert_int_equal(client_share_backend(0, total, total, CLIENT_SHARE_RESERVE_ACCOUNT), 0);
}

static void test_swap_size_option_is_checked(void **state)
{
    (void)state;
    uint32_t mib = SWAP_DEFAULT_MIB;
    assert_int_equal(swap_size_parse("96", &mib), 0);
    assert_int_equal(mib, 96);
    assert_int_equal(swap_size_parse("4096", &mib), 0);
    assert_int_equal(mib, SWAP_MOST_MIB);
    mib = SWAP_DEFAULT_MIB;
    const char *bad[] = {"", "0", "abc", "12abc", "-5", " 8", "0x10", "9.5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(swap_size_parse(bad[i], &mib), -E_INVALID);
    assert_int_equal(swap_size_parse("4097", &mib), -E_TOO_BIG);
    assert_int_equal(swap_size_parse("99999999999999999999999", &mib), -E_TOO_BIG);
    assert_int_equal(mib, SWAP_DEFAULT_MIB); /* untouched by a refused value */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lru_all_referenced_takes_active_head),
        cmocka_unit_test(test_lru_referenced_inactive_block_returns_to_active),
        cmocka_unit_test(test_lru_keeps_recently_used_blocks),
        cmocka_unit_test(test_swapped_in_block_goes_to_active_tail),
        cmocka_unit_test(test_fifo_ignores_referenced_bits),
        cmocka_unit_test(test_drop_hint_is_evicted_first),
        cmocka_unit_test(test_remove_takes_block_off_every_list),
        cmocka_unit_test(test_trace_hot_block_survives_under_lru_only),
        cmocka_unit_test(test_trace_eviction_order_recorded),
        cmocka_unit_test(test_inflight_bound),
        cmocka_unit_test(test_hint_block_range),
        cmocka_unit_test(test_space_first_free_aligned),
        cmocka_unit_test(test_nvm_layout_marks_persistent_blocks),
        cmocka_unit_test(test_nvm_map_keeps_checksums_after_the_units),
        cmocka_unit_test(test_client_slots_are_shared_per_account),
        cmocka_unit_test(test_an_account_claims_at_most_three_quarters_of_a_backend),
        cmocka_unit_test(test_swap_size_option_is_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
