/* test_nvm_persist.c: the flush layer (lib/nvm_persist.c): the choice of
 * flush from CPUID, each flush instruction this CPU offers run for real, the
 * order the observer sees, and users of it under a crash model
 * (nvm_crash_model.c) stopped at random points: a log append with its
 * header, and the pager's own NVM layout code (servers/pager/nvm_format.c).
 * The correct users recover at every crash point in every mode; a user that
 * leaves out a flush, a fence, or stores its header before its data is
 * durable is caught by the mode that models it. */
#include <cpuid.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nvm_crash_model.h"
#include "nvm_format.h"
#include <formica/errors.h>
#include <formica/kept_region.h>
#include <formica/nvm_persist.h>

#define TRIALS 400
#define ALL_MODES (CRASH_SOME_UNFENCED | CRASH_SOME_EVICTED)

static void test_flush_kind_from_cpuid(void **state)
{
    (void)state;
    struct nvm_cpuid both = {7, 1u << 19, (1u << 24) | (1u << 23)};
    assert_int_equal(nvm_flush_kind_for(&both), NVM_FLUSH_CLWB);
    struct nvm_cpuid opt = {7, 1u << 19, 1u << 23};
    assert_int_equal(nvm_flush_kind_for(&opt), NVM_FLUSH_CLFLUSHOPT);
    struct nvm_cpuid old = {7, 1u << 19, 0};
    assert_int_equal(nvm_flush_kind_for(&old), NVM_FLUSH_CLFLUSH);
    struct nvm_cpuid short_leaves = {6, 1u << 19,
                                     1u << 24}; /* leaf 7 absent: its bits are not read */
    assert_int_equal(nvm_flush_kind_for(&short_leaves), NVM_FLUSH_CLFLUSH);
    struct nvm_cpuid none = {7, 0, 0};
    assert_int_equal(nvm_flush_kind_for(&none), NVM_FLUSH_NONE);
    struct nvm_cpuid empty = {0, 1u << 19, 1u << 24};
    assert_int_equal(nvm_flush_kind_for(&empty), NVM_FLUSH_NONE);
    assert_string_equal(nvm_flush_kind_name(NVM_FLUSH_CLWB), "clwb");
    assert_string_equal(nvm_flush_kind_name(NVM_FLUSH_CLFLUSHOPT), "clflushopt");
    assert_string_equal(nvm_flush_kind_name(NVM_FLUSH_CLFLUSH), "clflush");
    assert_string_equal(nvm_flush_kind_name(NVM_FLUSH_NONE), "none");
    assert_string_equal(nvm_flush_kind_name((enum nvm_flush_kind)9), "unknown");
}

/* What this CPU offers, read independently of the library (gcc's cpuid.h). */
static bool host_offers(enum nvm_flush_kind kind)
{
    unsigned a, b, c, d;
    if (kind == NVM_FLUSH_CLFLUSH)
        return __get_cpuid(1, &a, &b, &c, &d) && (d & (1u << 19));
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return false;
    return kind == NVM_FLUSH_CLWB ? (b >> 24) & 1 : (b >> 23) & 1;
}

static void test_every_offered_flush_runs(void **state)
{
    (void)state;
    static uint8_t buffer[3 * 4096 + 7];
    enum nvm_flush_kind best = nvm_flush_kind_in_use();
    assert_true(host_offers(NVM_FLUSH_CLFLUSH)); /* every x86-64 CPU */
    for (int kind = NVM_FLUSH_CLWB; kind <= NVM_FLUSH_NONE; kind++) {
        bool offered = kind == NVM_FLUSH_NONE || host_offers(kind);
        long chosen = nvm_flush_choose(kind);
        if (!offered) {
            assert_int_equal(chosen, -E_INVALID);
            continue;
        }
        assert_int_equal(chosen, 0);
        assert_int_equal(nvm_flush_kind_in_use(), kind);
        for (size_t i = 0; i < sizeof buffer; i++)
            buffer[i] = (uint8_t)(i * 7 + kind);
        nvm_persist(buffer + 5, sizeof buffer - 5); /* unaligned start and end */
        nvm_persist(buffer, 0);
        for (size_t i = 0; i < sizeof buffer; i++)
            assert_int_equal(buffer[i], (uint8_t)(i * 7 + kind)); /* a flush changes no byte */
    }
    assert_int_equal(nvm_flush_choose((enum nvm_flush_kind)7), -E_INVALID);
    assert_int_equal(nvm_flush_choose(best), 0);
}

struct seen {
    char what[16];
    const void *address[16];
    size_t bytes[16];
    int count;
};

static void seen_write(void *context, const void *address, size_t bytes)
{
    struct seen *seen = context;
    seen->address[seen->count] = address, seen->bytes[seen->count] = bytes;
    seen->what[seen->count++] = 'w';
}

static void seen_flush(void *context, const void *address, size_t bytes)
{
    struct seen *seen = context;
    seen->address[seen->count] = address, seen->bytes[seen->count] = bytes;
    seen->what[seen->count++] = 'f';
}

static void seen_fence(void *context)
{
    struct seen *seen = context;
    seen->what[seen->count++] = 's';
}

static void test_observer_sees_each_step_in_order(void **state)
{
    (void)state;
    static uint64_t words[64];
    struct seen seen = {0};
    struct nvm_observer observer = {seen_write, seen_flush, seen_fence, &seen};
    nvm_observe(&observer);
    nvm_write_persist(&words[8], "abcdefghijklmnop", 16);
    nvm_store64_persist(&words[0], 0x1122334455667788ull);
    nvm_store32_persist((uint32_t *)&words[1], 7);
    nvm_fill(&words[16], 0xff, 64);
    nvm_flush(&words[16], 64);
    nvm_fence();
    nvm_observe(NULL);
    nvm_fence(); /* no one told */
    seen.what[seen.count] = '\0';
    assert_string_equal(seen.what, "wfswfswfswfs");
    assert_ptr_equal(seen.address[0], &words[8]);
    assert_int_equal(seen.bytes[0], 16);
    assert_ptr_equal(seen.address[1], &words[8]);
    assert_ptr_equal(seen.address[3], &words[0]);
    assert_int_equal(seen.bytes[4], 8);
    assert_int_equal(seen.bytes[6], 4);
    assert_int_equal(words[0], 0x1122334455667788ull);
    assert_int_equal(words[1], 7);
    assert_memory_equal(&words[8], "abcdefghijklmnop", 16);
    assert_int_equal(words[23], UINT64_MAX);
}

/* A workload over the model's memory, counting the operations it completed,
 * and the check a recovery makes of a crash image. */
struct workload {
    size_t bytes;
    uint8_t initial; /* what every byte holds before it runs */
    void (*run)(uint8_t *memory, uint64_t *done);
    bool (*recovered)(const uint8_t *image, size_t bytes, uint64_t done);
};

/* How many of `trials` random crash points of `workload` under `mode` did
 * not recover. */
static int failed_trials(const struct workload *workload, unsigned mode, int trials)
{
    struct crash_model model;
    uint64_t done = 0;
    crash_model_init(&model, workload->bytes, workload->initial, mode, UINT64_MAX, 1, &done);
    workload->run(model.memory, &done);
    uint64_t events = model.events;
    nvm_observe(NULL);
    bool whole = workload->recovered(crash_model_image(&model), workload->bytes, done);
    crash_model_free(&model);
    assert_true(whole); /* without a crash, everything it did is there */
    int failed = 0;
    for (int trial = 0; trial < trials; trial++) {
        uint64_t seed = 0x5eed0000u + (uint64_t)trial;
        done = 0;
        crash_model_init(&model, workload->bytes, workload->initial, mode,
                         seed * 2654435761u % (events + 1), seed, &done);
        workload->run(model.memory, &done);
        nvm_observe(NULL);
        assert_true(model.crashed || model.crash_at == events);
        if (!workload->recovered(crash_model_image(&model), workload->bytes,
                                 model.crashed ? model.progress_at_crash : done))
            failed++;
        crash_model_free(&model);
    }
    return failed;
}

/* The log: a header (magic, count) in line 0, then records of 120 bytes
 * (each across two lines), appended one by one. */
#define LOG_MAGIC 0x474f4c54534554ull
#define LOG_RECORD_BYTES 120
#define LOG_RECORDS 60
#define LOG_BYTES 8192 /* the header line and the records, rounded up to whole lines */

struct log_header {
    uint64_t magic, count;
};

enum log_fault { LOG_CORRECT, LOG_NO_FLUSH, LOG_NO_FENCE, LOG_HEADER_FIRST };
static enum log_fault log_fault;

static void log_record(uint8_t *record, uint64_t index)
{
    for (int i = 0; i < LOG_RECORD_BYTES; i++)
        record[i] = (uint8_t)(index * 31 + (uint64_t)i * 7 + 1);
}

static void log_run(uint8_t *memory, uint64_t *done)
{
    struct log_header *header = (struct log_header *)memory;
    nvm_store64_persist(&header->magic, LOG_MAGIC);
    for (uint64_t index = 0; index < LOG_RECORDS; index++) {
        uint8_t record[LOG_RECORD_BYTES];
        uint8_t *at = memory + 64 + index * LOG_RECORD_BYTES;
        log_record(record, index);
        uint64_t count = index + 1;
        switch (log_fault) {
        case LOG_CORRECT:
            nvm_write_persist(at, record, sizeof record);
            nvm_store64_persist(&header->count, count);
            break;
        case LOG_NO_FLUSH: /* the record is stored, never written back */
            nvm_write(at, record, sizeof record);
            nvm_store64_persist(&header->count, count);
            break;
        case LOG_NO_FENCE: /* written back, but nothing orders it before the count */
            nvm_write(at, record, sizeof record);
            nvm_flush(at, sizeof record);
            nvm_store64_persist(&header->count, count);
            break;
        case LOG_HEADER_FIRST: /* the count stored before the record is durable */
            nvm_write(at, record, sizeof record);
            nvm_write(&header->count, &count, sizeof count);
            nvm_persist(at, sizeof record);
            nvm_persist(&header->count, sizeof count);
            break;
        }
        (*done)++;
        crash_model_point();
    }
}

/* Every appended record whose append returned is there, and every record
 * the count names is whole. */
static bool log_recovered(const uint8_t *image, size_t bytes, uint64_t done)
{
    (void)bytes;
    const struct log_header *header = (const struct log_header *)image;
    if (header->magic != LOG_MAGIC)
        return done == 0 && header->count == 0;
    if (header->count < done || header->count > done + 1 || header->count > LOG_RECORDS)
        return false;
    for (uint64_t index = 0; index < header->count; index++) {
        uint8_t record[LOG_RECORD_BYTES];
        log_record(record, index);
        if (memcmp(image + 64 + index * LOG_RECORD_BYTES, record, sizeof record) != 0)
            return false;
    }
    return true;
}

static const struct workload log_workload = {LOG_BYTES, 0, log_run, log_recovered};

static void test_a_correct_log_always_recovers(void **state)
{
    (void)state;
    log_fault = LOG_CORRECT;
    for (unsigned mode = 0; mode <= ALL_MODES; mode++)
        assert_int_equal(failed_trials(&log_workload, mode, TRIALS), 0);
}

static void test_a_missing_flush_is_caught(void **state)
{
    (void)state;
    log_fault = LOG_NO_FLUSH;
    assert_true(failed_trials(&log_workload, CRASH_DURABLE_ONLY, TRIALS) > 0);
}

/* Only a crash that keeps some written-back lines a fence never covered
 * shows it; the strict model cannot. */
static void test_a_missing_fence_is_caught(void **state)
{
    (void)state;
    log_fault = LOG_NO_FENCE;
    assert_int_equal(failed_trials(&log_workload, CRASH_DURABLE_ONLY, TRIALS), 0);
    assert_true(failed_trials(&log_workload, CRASH_SOME_UNFENCED, TRIALS) > 0);
}

/* Flushing in the right order is not enough if the count was stored first:
 * the cache may write its line back at any time. */
static void test_a_header_stored_before_its_data_is_caught(void **state)
{
    (void)state;
    log_fault = LOG_HEADER_FIRST;
    assert_int_equal(failed_trials(&log_workload, CRASH_DURABLE_ONLY, TRIALS), 0);
    assert_int_equal(failed_trials(&log_workload, CRASH_SOME_UNFENCED, TRIALS), 0);
    assert_true(failed_trials(&log_workload, CRASH_SOME_EVICTED, TRIALS) > 0);
}

/* The pager's layout: a format, one persistent key of 8 blocks of 4 KiB
 * (map in unit 1, block b at unit 2 + b), then three rounds of stores of
 * every block, each round new bytes. Operation 0 is the format, 1 the key,
 * 2 + k the k-th store (block k % 8, version k / 8 + 1). */
#define PAGER_UNITS 16
#define PAGER_BLOCKS 8
#define PAGER_ROUNDS 3
#define PAGER_KEY 7

enum pager_fault { PAGER_CORRECT, PAGER_UNFLUSHED, PAGER_MAP_FIRST };
static enum pager_fault pager_fault;

static void pager_block(uint64_t *words, uint32_t block, uint32_t version)
{
    for (uint32_t i = 0; i < NVM_UNIT_BYTES / 8; i++)
        words[i] = (uint64_t)block << 40 | (uint64_t)version << 32 | i;
}

static const struct nvm_entry pager_shape = {PAGER_KEY, NVM_UNIT_BYTES, PAGER_BLOCKS, 1, 1, 1000,
                                             0};

/* The order the pager had before the flush layer: plain stores, no flush. */
static void pager_unflushed_store(uint8_t *memory, struct nvm_header *header, uint32_t block,
                                  const uint64_t *data, uint64_t sum)
{
    memcpy(memory + (2 + block) * NVM_UNIT_BYTES, data, NVM_UNIT_BYTES);
    nvm_sums_of(memory, &header->entries[0])[block] = sum;
    nvm_map_of(memory, &header->entries[0])[block] = 2 + block;
}

static void pager_map_first_store(uint8_t *memory, struct nvm_header *header, uint32_t block,
                                  const uint64_t *data, uint64_t sum)
{
    nvm_store32_persist(&nvm_map_of(memory, &header->entries[0])[block], 2 + block);
    nvm_write_persist(memory + (2 + block) * NVM_UNIT_BYTES, data, NVM_UNIT_BYTES);
    nvm_store64_persist(&nvm_sums_of(memory, &header->entries[0])[block], sum);
}

static void pager_run(uint8_t *memory, uint64_t *done)
{
    struct nvm_header *header = (struct nvm_header *)memory;
    if (pager_fault == PAGER_UNFLUSHED) {
        memset(header, 0, sizeof *header);
        header->version = NVM_VERSION, header->unit_bytes = NVM_UNIT_BYTES;
        header->total_bytes = PAGER_UNITS * NVM_UNIT_BYTES;
        header->magic = NVM_MAGIC;
        (*done)++;
        crash_model_point();
        header->entries[0] = pager_shape;
        memset(nvm_map_of(memory, &pager_shape), 0xff, NVM_UNIT_BYTES);
    } else {
        nvm_format(header, PAGER_UNITS * NVM_UNIT_BYTES);
        (*done)++;
        crash_model_point();
        nvm_entry_create(memory, header, 0, &pager_shape);
    }
    (*done)++;
    crash_model_point();
    static uint64_t data[NVM_UNIT_BYTES / 8];
    for (uint32_t store = 0; store < PAGER_ROUNDS * PAGER_BLOCKS; store++) {
        uint32_t block = store % PAGER_BLOCKS;
        pager_block(data, block, store / PAGER_BLOCKS + 1);
        uint64_t sum = kept_checksum(data, NVM_UNIT_BYTES);
        if (pager_fault == PAGER_UNFLUSHED)
            pager_unflushed_store(memory, header, block, data, sum);
        else if (pager_fault == PAGER_MAP_FIRST)
            pager_map_first_store(memory, header, block, data, sum);
        else
            nvm_block_store(memory, &header->entries[0], block, 2 + block, data, NVM_UNIT_BYTES,
                            sum);
        (*done)++;
        crash_model_point();
    }
}

/* After `done` operations: the latest completed version of `block` (0:
 * none), and whether the store in flight was of it. */
static uint32_t pager_version_done(uint64_t done, uint32_t block, bool *in_flight)
{
    uint64_t stores = done >= 2 ? done - 2 : 0, total = PAGER_ROUNDS * PAGER_BLOCKS;
    *in_flight = done >= 2 && stores < total && stores % PAGER_BLOCKS == block;
    if (stores <= block)
        return 0;
    return (uint32_t)((stores - 1 - block) / PAGER_BLOCKS + 1);
}

/* The mount the pager does (nvm_header_valid, nvm_find_key, nvm_mark_used)
 * on a copy of the image, then each block as a reattach and a fault see it:
 * a block whose store completed is there with its latest bytes; a mapped
 * block whose bytes do not match its checksum (which the fault reports)
 * only if it was being overwritten. */
static bool pager_recovered(const uint8_t *image, size_t bytes, uint64_t done)
{
    uint8_t *copy = malloc(bytes);
    memcpy(copy, image, bytes);
    struct nvm_header *header = (struct nvm_header *)copy;
    bool good = true;
    if (!nvm_header_valid(header, bytes)) {
        good = done == 0;
        goto out;
    }
    uint64_t bits[1];
    struct space space;
    space_init(&space, bits, PAGER_UNITS);
    if (nvm_mark_used(copy, header, &space) != 0) {
        good = false; /* a valid header with entries or map entries not written whole */
        goto out;
    }
    int index = nvm_find_key(header, PAGER_KEY);
    if (index != 0) {
        good = index < 0 && done <= 1;
        goto out;
    }
    const uint32_t *map = nvm_map_of(copy, &header->entries[0]);
    const uint64_t *sums = nvm_sums_of(copy, &header->entries[0]);
    static uint64_t expected[NVM_UNIT_BYTES / 8];
    for (uint32_t block = 0; block < PAGER_BLOCKS && good; block++) {
        bool in_flight;
        uint32_t version = pager_version_done(done, block, &in_flight);
        if (map[block] == NVM_NO_UNIT) {
            good = version == 0;
            continue;
        }
        const uint8_t *data = copy + (uint64_t)map[block] * NVM_UNIT_BYTES;
        if (map[block] != 2 + block) {
            good = false;
        } else if (kept_checksum(data, NVM_UNIT_BYTES) != sums[block]) {
            good = in_flight && version > 0; /* an overwrite cut short: reported, not served */
        } else {
            pager_block(expected, block, version);
            bool latest = version > 0 && memcmp(data, expected, NVM_UNIT_BYTES) == 0;
            pager_block(expected, block, version + 1);
            good = latest || (in_flight && memcmp(data, expected, NVM_UNIT_BYTES) == 0);
        }
    }
out:
    free(copy);
    return good;
}

/* Over an NVM an earlier layout left full of other bytes (0x5a). */
static const struct workload pager_workload = {PAGER_UNITS * NVM_UNIT_BYTES, 0x5a, pager_run,
                                               pager_recovered};

static void test_the_pager_layout_always_recovers(void **state)
{
    (void)state;
    pager_fault = PAGER_CORRECT;
    for (unsigned mode = 0; mode <= ALL_MODES; mode++)
        assert_int_equal(failed_trials(&pager_workload, mode, TRIALS), 0);
}

static void test_the_pager_layout_without_flushes_is_caught(void **state)
{
    (void)state;
    pager_fault = PAGER_UNFLUSHED;
    assert_true(failed_trials(&pager_workload, CRASH_DURABLE_ONLY, TRIALS) > 0);
}

static void test_a_map_entry_before_its_block_is_caught(void **state)
{
    (void)state;
    pager_fault = PAGER_MAP_FIRST;
    assert_true(failed_trials(&pager_workload, CRASH_DURABLE_ONLY, TRIALS) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flush_kind_from_cpuid),
        cmocka_unit_test(test_every_offered_flush_runs),
        cmocka_unit_test(test_observer_sees_each_step_in_order),
        cmocka_unit_test(test_a_correct_log_always_recovers),
        cmocka_unit_test(test_a_missing_flush_is_caught),
        cmocka_unit_test(test_a_missing_fence_is_caught),
        cmocka_unit_test(test_a_header_stored_before_its_data_is_caught),
        cmocka_unit_test(test_the_pager_layout_always_recovers),
        cmocka_unit_test(test_the_pager_layout_without_flushes_is_caught),
        cmocka_unit_test(test_a_map_entry_before_its_block_is_caught),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
