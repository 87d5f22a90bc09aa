/* test_nvm_identity.c: the identity and checksum header (lib/nvm_identity.c):
 * its checks (not ours, someone else's), and its writes under the crash
 * model (nvm_crash_model.c) stopped at every point: a torn format is never
 * valid, and a torn update of a pair of slots leaves the old header or the
 * new one, never a mix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "nvm_crash_model.h"
#include <formica/nvm_identity.h>
#include <formica/nvm_persist.h>

#define MAGIC 0x524549544d524f46ull /* "FORMTIER" */
#define VERSION 3u
#define DEVICE (64ull << 20)
#define ALL_MODES (CRASH_SOME_UNFENCED | CRASH_SOME_EVICTED)

static struct nvm_identity body_for(uint8_t who, uint64_t geometry)
{
    struct nvm_identity body = {.version = VERSION, .device_bytes = DEVICE};
    memset(body.identity, who, sizeof body.identity);
    for (unsigned i = 0; i < NVM_IDENTITY_GEOMETRY; i++)
        body.geometry[i] = geometry + i;
    return body;
}

static void test_checks_tell_ours_not_ours_and_someone_elses(void **state)
{
    (void)state;
    static struct nvm_identity header;
    struct nvm_identity body = body_for(7, 16);
    nvm_identity_write(&header, &body, MAGIC);
    uint8_t mine[NVM_IDENTITY_BYTES], other[NVM_IDENTITY_BYTES];
    memset(mine, 7, sizeof mine);
    memset(other, 8, sizeof other);
    assert_int_equal(nvm_identity_check(&header, MAGIC, VERSION, DEVICE, mine, 48),
                     NVM_IDENTITY_OURS);
    assert_int_equal(nvm_identity_check(&header, MAGIC, VERSION, DEVICE, other, 48),
                     NVM_IDENTITY_SOMEONE_ELSES);
    assert_int_equal(nvm_identity_check(&header, MAGIC, VERSION, DEVICE, NULL, 0),
                     NVM_IDENTITY_OURS);
    assert_int_equal(nvm_identity_check(&header, MAGIC + 1, VERSION, DEVICE, mine, 48),
                     NVM_IDENTITY_NOT_OURS);
    assert_int_equal(nvm_identity_check(&header, MAGIC, VERSION + 1, DEVICE, mine, 48),
                     NVM_IDENTITY_NOT_OURS);
    assert_int_equal(nvm_identity_check(&header, MAGIC, VERSION, DEVICE * 2, mine, 48),
                     NVM_IDENTITY_NOT_OURS);
    header.geometry[2] ^= 1; /* a scribbled body: the checksum no longer matches */
    assert_int_equal(nvm_identity_check(&header, MAGIC, VERSION, DEVICE, mine, 48),
                     NVM_IDENTITY_NOT_OURS);
}

static bool is_body(const struct nvm_identity *header, uint8_t who, uint64_t geometry)
{
    struct nvm_identity expected = body_for(who, geometry);
    return memcmp(header->identity, expected.identity, NVM_IDENTITY_BYTES) == 0 &&
           memcmp(header->geometry, expected.geometry, sizeof expected.geometry) == 0;
}

/* Every crash point of a format in every mode: never valid unless whole. */
static void test_a_torn_format_is_never_valid(void **state)
{
    (void)state;
    for (unsigned mode = 0; mode <= ALL_MODES; mode++) {
        for (uint64_t crash_at = 0; crash_at < 12; crash_at++) {
            for (uint64_t seed = 1; seed < 20; seed++) {
                struct crash_model model;
                uint64_t done = 0;
                crash_model_init(&model, 256, 0xa5, mode, crash_at, seed, &done);
                struct nvm_identity body = body_for(3, 40);
                nvm_identity_write((struct nvm_identity *)model.memory, &body, MAGIC);
                done = 1;
                nvm_observe(NULL);
                const struct nvm_identity *image =
                    (const struct nvm_identity *)crash_model_image(&model);
                bool valid = nvm_identity_valid(image, MAGIC, VERSION, DEVICE);
                if (valid)
                    assert_true(is_body(image, 3, 40));
                if (!model.crashed)
                    assert_true(valid);
                crash_model_free(&model);
            }
        }
    }
}

/* Three updates of a pair, stopped anywhere: the newest slot is always
 * one whole version, at least the one before the update in flight. */
static void test_a_torn_pair_update_keeps_a_whole_header(void **state)
{
    (void)state;
    for (unsigned mode = 0; mode <= ALL_MODES; mode++) {
        for (uint64_t crash_at = 0; crash_at < 40; crash_at++) {
            for (uint64_t seed = 1; seed < 12; seed++) {
                struct crash_model model;
                uint64_t done = 0;
                crash_model_init(&model, 256, 0, mode, UINT64_MAX, seed, &done);
                struct nvm_identity *pair = (struct nvm_identity *)model.memory;
                struct nvm_identity first = body_for(1, 100);
                nvm_identity_write(&pair[0], &first, MAGIC);
                model.crash_at = model.events + crash_at;
                for (uint64_t update = 1; update <= 3; update++) {
                    struct nvm_identity next = body_for(1, 100 + update);
                    nvm_identity_pair_update(pair, &next, MAGIC, VERSION);
                    done = update;
                }
                nvm_observe(NULL);
                const struct nvm_identity *image =
                    (const struct nvm_identity *)crash_model_image(&model);
                uint64_t kept = model.crashed ? model.progress_at_crash : done;
                int newest = nvm_identity_pair_newest(image, MAGIC, VERSION, DEVICE);
                assert_true(newest >= 0);
                uint64_t version = image[newest].geometry[0] - 100;
                assert_true(version == kept || version == kept + 1);
                assert_true(version <= 3);
                assert_int_equal(image[newest].generation, version);
                assert_true(is_body(&image[newest], 1, 100 + version));
                crash_model_free(&model);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checks_tell_ours_not_ours_and_someone_elses),
        cmocka_unit_test(test_a_torn_format_is_never_valid),
        cmocka_unit_test(test_a_torn_pair_update_keeps_a_whole_header),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
