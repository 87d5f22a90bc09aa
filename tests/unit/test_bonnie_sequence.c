/* test_bonnie_sequence.c: Bonnie's reference sequence (apps/bonnie/
 * bonnie_random.h): splitmix64's published values, fixed values of the
 * per-child seeding, and agreement with the host replay script. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "bonnie_random.h"

/* splitmix64 from state 0 (the reference implementation's first outputs). */
static void test_splitmix64_reference_values(void **state)
{
    (void)state;
    struct bonnie_random random;
    bonnie_random_seed(&random, BONNIE_CHILD_MIX, 0); /* state 0 */
    assert_int_equal(random.state, 0);
    assert_true(bonnie_random_next(&random) == 0xe220a8397b1dcdafull);
    assert_true(bonnie_random_next(&random) == 0x6e789e6aa1b965f4ull);
    assert_true(bonnie_random_next(&random) == 0x06c45d188009454full);
}

/* Seed 1, child 0: the values docs/bonnie.md lists. */
static void test_seed_one_child_zero(void **state)
{
    (void)state;
    static const uint64_t expected[] = {0x48416938ef0dcf6full, 0x8596845e7ea88ca1ull,
                                        0x4c71f30e500f0b72ull, 0x31f6c0cafb925d54ull};
    struct bonnie_random random;
    bonnie_random_seed(&random, 1, 0);
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        assert_true(bonnie_random_next(&random) == expected[i]);
}

/* The first reference of seed 1, child 0 over 32 chunks at 10 %: chunk 15, updated. */
static void test_first_reference(void **state)
{
    (void)state;
    struct bonnie_random random;
    struct bonnie_reference reference;
    bonnie_random_seed(&random, 1, 0);
    bonnie_next_reference(&random, 32, 10, &reference);
    assert_int_equal(reference.chunk, 15);
    assert_true(reference.update);
    assert_true(reference.pattern[0] == 0x4c71f30e500f0b72ull);
    bonnie_next_reference(&random, 32, 10, &reference);
    assert_false(reference.update);
    assert_true(reference.pattern[0] == 0 && reference.pattern[1] == 0);
}

static void test_children_differ(void **state)
{
    (void)state;
    struct bonnie_random first, second;
    bonnie_random_seed(&first, 7, 0);
    bonnie_random_seed(&second, 7, 1);
    assert_true(bonnie_random_next(&first) != bonnie_random_next(&second));
}

static void test_fill_byte(void **state)
{
    (void)state;
    assert_int_equal(bonnie_fill_byte(0), 0);
    assert_int_equal(bonnie_fill_byte(250), 250);
    assert_int_equal(bonnie_fill_byte(251), 0);
    assert_int_equal(bonnie_fill_byte(4096), (4096 % 251) ^ 1);
}

static void hex_of(const struct bonnie_reference *reference, char *text)
{
    if (!reference->update) {
        strcpy(text, "-");
        return;
    }
    const uint8_t *bytes = (const uint8_t *)reference->pattern;
    for (int i = 0; i < 16; i++)
        sprintf(text + 2 * i, "%02x", bytes[i]);
}

/* The replay's --print-sequence equals this implementation, line by line. */
static void test_replay_agrees(void **state)
{
    (void)state;
    enum { COUNT = 200, CHILD = 3, CHUNKS = 32, PERCENT = 30 };
    const uint64_t seed = 0x1234abcdull;
    FILE *replay = popen("python3 " REPO_ROOT "/build/bench/bonnie_replay.py --print-sequence 200"
                         " --seed 0x1234abcd --child 3 -s 128K -c 4096 -u 30",
                         "r");
    assert_non_null(replay);
    char line[128], want[128], hex[40];
    struct bonnie_random random;
    bonnie_random_seed(&random, seed, CHILD);
    for (int i = 0; i < COUNT; i++) {
        assert_non_null(fgets(line, sizeof line, replay));
        snprintf(want, sizeof want, "%016llx\n", (unsigned long long)bonnie_random_next(&random));
        assert_string_equal(line, want);
    }
    bonnie_random_seed(&random, seed, CHILD);
    for (int i = 0; i < COUNT; i++) {
        struct bonnie_reference reference;
        bonnie_next_reference(&random, CHUNKS, PERCENT, &reference);
        hex_of(&reference, hex);
        assert_non_null(fgets(line, sizeof line, replay));
        snprintf(want, sizeof want, "%llu %d %s\n", (unsigned long long)reference.chunk,
                 reference.update ? 1 : 0, hex);
        assert_string_equal(line, want);
    }
    assert_int_equal(pclose(replay), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_splitmix64_reference_values),
        cmocka_unit_test(test_seed_one_child_zero),
        cmocka_unit_test(test_first_reference),
        cmocka_unit_test(test_children_differ),
        cmocka_unit_test(test_fill_byte),
        cmocka_unit_test(test_replay_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
