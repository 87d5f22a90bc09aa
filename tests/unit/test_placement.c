/* test_placement.c: host unit tests of mkernel/placement.c (placement files)
 * and lib/placement_rule.c (which core an application process gets). Reads
 * the real presets from build/placements/ under REPO_ROOT. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "placement.h"
#include <formica/placement_rule.h>

#define MAX_ERRORS 8
#define MAX_CORES FORMICA_MAX_CORES

struct result {
    int error_count;
    struct placement_info placement;
    struct placement_error errors[MAX_ERRORS];
};

/* Cores 0..cores-1 split into `sockets` equal sockets (the first ones bigger). */
static void make_sockets(uint32_t cores, uint32_t sockets, uint32_t *core_socket)
{
    uint32_t per_socket = (cores + sockets - 1) / sockets;
    for (uint32_t core = 0; core < cores; core++)
        core_socket[core] = core / per_socket;
}

/* Parses from an exact-size heap copy, so ASan sees any read past the end. */
static void parse_sockets(const char *text, size_t length, uint32_t cores, uint32_t sockets,
                          struct result *result)
{
    uint32_t core_socket[MAX_CORES];
    make_sockets(cores, sockets, core_socket);
    char *copy = malloc(length == 0 ? 1 : length);
    assert_non_null(copy);
    memcpy(copy, text, length);
    memset(result, 0x5a, sizeof(*result));
    strcpy(result->placement.name, "caller");
    result->error_count = placement_parse(copy, length, cores, core_socket, &result->placement,
                                          result->errors, MAX_ERRORS);
    free(copy);
}

static void parse_text(const char *text, uint32_t cores, struct result *result)
{
    parse_sockets(text, strlen(text), cores, 1, result);
}

static size_t read_preset(int preset, char *buffer, size_t size)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/build/placements/%d.conf", REPO_ROOT, preset);
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        fail_msg("cannot open %s", path);
    size_t length = fread(buffer, 1, size, file);
    assert_true(length < size);
    fclose(file);
    return length;
}

static void parse_preset(int preset, uint32_t cores, uint32_t sockets, struct result *result)
{
    char text[4096];
    size_t length = read_preset(preset, text, sizeof(text));
    parse_sockets(text, length, cores, sockets, result);
}

static void assert_servers(const struct placement_info *placement, uint32_t fs, uint32_t blk,
                           uint32_t dk, uint32_t pager)
{
    assert_int_equal(placement->server_core[SERVER_FS], fs);
    assert_int_equal(placement->server_core[SERVER_BLK], blk);
    assert_int_equal(placement->server_core[SERVER_DK], dk);
    assert_int_equal(placement->server_core[SERVER_PAGER], pager);
}

static void assert_app_cores(const struct placement_info *placement, bool spread,
                             uint32_t preferred, const uint32_t *cores, uint32_t count)
{
    assert_int_equal(placement->app_spread, spread ? 1 : 0);
    assert_int_equal(placement->app_preferred_count, preferred);
    assert_int_equal(placement->app_core_count, count);
    for (uint32_t i = 0; i < count; i++)
        assert_int_equal(placement->app_cores[i], cores[i]);
}

static void assert_is_default(const struct placement_info *placement, uint32_t warnings)
{
    static const uint32_t core_zero[] = {0};
    assert_string_equal(placement->name, "default");
    assert_servers(placement, 0, 0, 0, 0);
    assert_app_cores(placement, false, 1, core_zero, 1);
    assert_int_equal(placement->warnings, warnings);
}

static void assert_error(const struct result *result, unsigned index, uint32_t line,
                         const char *message)
{
    assert_true((int)index < result->error_count);
    assert_int_equal(result->errors[index].line, line);
    assert_string_equal(result->errors[index].message, message);
}

static void assert_ok(const struct result *result)
{
    if (result->error_count != 0)
        fail_msg("unexpected error on line %u: %s", result->errors[0].line,
                 result->errors[0].message);
    assert_string_equal(result->placement.name, "caller");
    assert_int_equal(result->placement.warnings, 0);
}

/* ---- Presets ------------------------------------------------------------ */

/* Smallest machine each preset fits: #8 needs two sockets, handled apart. */
static const uint32_t preset_min_cores[10] = {0, 1, 2, 2, 2, 3, 2, 3, 2, 1};

/* Every preset on 1, 2, 3, 4 and 16 cores: it parses exactly when the
 * machine is big enough, and every core it names exists. */
static void test_presets_on_every_size(void **state)
{
    (void)state;
    static const uint32_t sizes[] = {1, 2, 3, 4, 16};
    for (int preset = 1; preset <= 8; preset++) { /* #9: test_preset_9_instances */
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
            uint32_t cores = sizes[s];
            uint32_t sockets = preset == 8 && cores >= 2 ? 2 : 1;
            struct result result;
            parse_preset(preset, cores, sockets, &result);
            bool fits = cores >= preset_min_cores[preset];
            if (!fits) {
                assert_true(result.error_count > 0);
                assert_is_default(&result.placement, (uint32_t)result.error_count);
                continue;
            }
            assert_ok(&result);
            for (int server = 0; server < PLACEMENT_SERVERS; server++)
                assert_true(result.placement.server_core[server] < cores);
            for (uint32_t i = 0; i < result.placement.app_core_count; i++)
                assert_true(result.placement.app_cores[i] < cores);
            if (result.placement.app_spread)
                assert_int_equal(result.placement.app_core_count, cores);
        }
    }
}

static void test_presets_1_to_5_pin_the_application(void **state)
{
    (void)state;
    static const uint32_t core_zero[] = {0};
    static const uint32_t fs_core[6] = {0, 0, 1, 0, 1, 1};
    static const uint32_t blk_core[6] = {0, 0, 0, 1, 1, 2};
    for (int preset = 1; preset <= 5; preset++) {
        struct result result;
        parse_preset(preset, 4, 1, &result);
        assert_ok(&result);
        assert_servers(&result.placement, fs_core[preset], blk_core[preset], 0, 0);
        assert_app_cores(&result.placement, false, 1, core_zero, 1);
    }
}

static void test_preset_errors_on_small_machines(void **state)
{
    (void)state;
    struct result result;
    parse_preset(2, 1, 1, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 4, "core 1 does not exist (1 core)");
    parse_preset(5, 2, 1, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 5, "core 2 does not exist (2 cores)");
    parse_preset(5, 1, 1, &result);
    assert_int_equal(result.error_count, 2);
    assert_error(&result, 0, 4, "core 1 does not exist (1 core)");
    assert_error(&result, 1, 5, "core 2 does not exist (1 core)");
    assert_is_default(&result.placement, 2);
}

static void test_preset_6_spread(void **state)
{
    (void)state;
    struct result result;
    parse_preset(6, 4, 1, &result);
    assert_ok(&result);
    assert_servers(&result.placement, 1, 1, 1, 1);
    static const uint32_t four[] = {0, 2, 3, 1};
    assert_app_cores(&result.placement, true, 3, four, 4);

    parse_preset(6, 16, 2, &result);
    assert_ok(&result);
    static const uint32_t sixteen[] = {0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1};
    assert_app_cores(&result.placement, true, 15, sixteen, 16);
}

static void test_preset_7_spread(void **state)
{
    (void)state;
    struct result result;
    parse_preset(7, 3, 1, &result);
    assert_ok(&result);
    assert_servers(&result.placement, 1, 2, 2, 2);
    static const uint32_t three[] = {0, 1, 2};
    assert_app_cores(&result.placement, true, 1, three, 3);

    parse_preset(7, 16, 2, &result);
    assert_ok(&result);
    static const uint32_t sixteen[] = {0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 1, 2};
    assert_app_cores(&result.placement, true, 14, sixteen, 16);
}

static void test_preset_8_other_socket(void **state)
{
    (void)state;
    struct result result;
    parse_preset(8, 16, 2, &result);
    assert_ok(&result);
    assert_servers(&result.placement, 1, 8, 8, 8);
    static const uint32_t sixteen[] = {0, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 1, 8};
    assert_app_cores(&result.placement, true, 14, sixteen, 16);

    parse_preset(8, 4, 2, &result);
    assert_ok(&result);
    assert_servers(&result.placement, 1, 2, 2, 2);

    /* fs on core 1 is itself on the second socket: the other one is core 0's. */
    parse_preset(8, 2, 2, &result);
    assert_ok(&result);
    assert_servers(&result.placement, 1, 0, 0, 0);
    static const uint32_t two[] = {0, 1};
    assert_app_cores(&result.placement, true, 0, two, 2);

    parse_preset(8, 4, 1, &result);
    assert_int_equal(result.error_count, 3);
    assert_error(&result, 0, 5, "other-socket needs at least two sockets");
    assert_error(&result, 1, 6, "other-socket needs at least two sockets");
    assert_error(&result, 2, 7, "other-socket needs at least two sockets");
    assert_is_default(&result.placement, 3);
}

/* ---- Format ------------------------------------------------------------- */

static void test_empty_file_is_all_core_zero(void **state)
{
    (void)state;
    static const uint32_t core_zero[] = {0};
    struct result result;
    parse_text("", 4, &result);
    assert_ok(&result);
    assert_servers(&result.placement, 0, 0, 0, 0);
    assert_app_cores(&result.placement, false, 1, core_zero, 1);
    parse_text("# only a comment\n\n   \t\n", 4, &result);
    assert_ok(&result);
    assert_servers(&result.placement, 0, 0, 0, 0);
}

static void test_unnamed_servers_default_to_core_zero(void **state)
{
    (void)state;
    struct result result;
    parse_text("blk 3\n", 4, &result);
    assert_ok(&result);
    assert_servers(&result.placement, 0, 3, 0, 0);
}

static void test_comments_tabs_and_trailing_text(void **state)
{
    (void)state;
    struct result result;
    parse_text("  fs\t2   # the file system\n#blk 9\npager 3#no space before the comment\n", 4,
               &result);
    assert_ok(&result);
    assert_servers(&result.placement, 2, 0, 0, 3);
}

static void test_no_trailing_newline(void **state)
{
    (void)state;
    struct result result;
    parse_text("fs 1\nblk 2", 4, &result);
    assert_ok(&result);
    assert_servers(&result.placement, 1, 2, 0, 0);
    parse_text("fs 1\nblk 9", 4, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 2, "core 9 does not exist (4 cores)");
}

static void test_crlf_line_endings(void **state)
{
    (void)state;
    struct result result;
    parse_text("# preset\r\nfs 1\r\nblk 2\r\napp 0,3\r\n", 4, &result);
    assert_ok(&result);
    assert_servers(&result.placement, 1, 2, 0, 0);
    static const uint32_t list[] = {0, 3};
    assert_app_cores(&result.placement, false, 2, list, 2);
    parse_text("fs 1\r\n\r\nfss 2\r\n", 4, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 3, "unknown key 'fss'");
}

static void test_success_keeps_the_name(void **state)
{
    (void)state;
    struct placement_info placement;
    memset(&placement, 0, sizeof(placement));
    strcpy(placement.name, "5");
    placement.warnings = 7;
    assert_int_equal(placement_parse("fs 1", 4, 2, NULL, &placement, NULL, 0), 0);
    assert_string_equal(placement.name, "5");
    assert_int_equal(placement.warnings, 0);
    assert_int_equal(placement.server_core[SERVER_FS], 1);
}

/* ---- Errors ------------------------------------------------------------- */

static void test_error_no_such_core(void **state)
{
    (void)state;
    struct result result;
    parse_text("fs 1\n\nblk 7\n", 4, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 3, "core 7 does not exist (4 cores)");
    assert_is_default(&result.placement, 1);
    parse_text("dk 123456789012345678901234567890\n", 4, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 1, "core 123456789012345678901234... does not exist (4 cores)");
}

static void test_error_unknown_key(void **state)
{
    (void)state;
    struct result result;
    parse_text("fs 1\n# comment\nfss 2\n", 4, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 3, "unknown key 'fss'");
    parse_text("FS 1\n", 4, &result);
    assert_error(&result, 0, 1, "unknown key 'FS'");
    parse_text("f\001s 1\n", 4, &result);
    assert_error(&result, 0, 1, "unknown key 'f?s'");
}

static void test_error_malformed_lines(void **state)
{
    (void)state;
    struct result result;
    parse_text("fs\nblk 1 2\napp 0 # fine\n", 4, &result);
    assert_int_equal(result.error_count, 2);
    assert_error(&result, 0, 1, "malformed line (expected 'key value')");
    assert_error(&result, 1, 2, "malformed line (expected 'key value')");
    assert_is_default(&result.placement, 2);
}

static void test_error_duplicate_key(void **state)
{
    (void)state;
    struct result result;
    parse_text("# x\nfs 1\nblk 1\nfs 2\n", 4, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 4, "duplicate key 'fs' (first on line 2)");
    /* A key whose value was wrong still counts as given. */
    parse_text("app x\napp 1\n", 4, &result);
    assert_int_equal(result.error_count, 2);
    assert_error(&result, 1, 2, "duplicate key 'app' (first on line 1)");
}

static void test_error_bad_values(void **state)
{
    (void)state;
    struct result result;
    /* dk and pager: servers of one instance (FS and BLK may have several). */
    parse_text("dk -1\npager one\napp 0,,1\napp2 0\n", 4, &result);
    assert_int_equal(result.error_count, 4);
    assert_error(&result, 0, 1, "bad value '-1' (expected a core number or other-socket)");
    assert_error(&result, 1, 2, "bad value 'one' (expected a core number or other-socket)");
    assert_error(&result, 2, 3, "bad value '0,,1' for app (a core, a list like 0,2,3, or spread)");
    assert_error(&result, 3, 4, "unknown key 'app2'");
    parse_text("blk one\n", 4, &result); /* BLK may have instances (its shards) */
    assert_error(&result, 0, 1,
                 "bad value 'one' (expected a core, a list like 1,5,9, per-core or other-socket)");
    parse_text("app 1,2,1\n", 4, &result);
    assert_error(&result, 0, 1, "core 1 listed twice for app");
    parse_text("app 0,\n", 4, &result);
    assert_int_equal(result.error_count, 1);
    parse_text("app spread,0\n", 4, &result);
    assert_int_equal(result.error_count, 1);
    parse_text("app 0,4\n", 4, &result);
    assert_error(&result, 0, 1, "core 4 does not exist (4 cores)");
    parse_text("fs other-socket\n", 4, &result);
    assert_error(&result, 0, 1, "other-socket needs at least two sockets");
}

/* BLK's shards (docs/storage.md "Shards"): BLK's manifest says `instances`,
 * so its key takes a list; DK's does not. */
static void test_blk_shard_list(void **state)
{
    (void)state;
    struct result result;
    parse_text("fs 0\nblk 2,1\n", 4, &result);
    assert_ok(&result);
    assert_int_equal(result.placement.server_instance_count[SERVER_BLK], 2);
    assert_int_equal(result.placement.server_instance_cores[SERVER_BLK][0], 2);
    assert_int_equal(result.placement.server_instance_cores[SERVER_BLK][1], 1);
    assert_int_equal(result.placement.server_core[SERVER_BLK], 2);
    assert_int_equal(result.placement.server_instance_count[SERVER_DK], 1);
    parse_text("dk 0,1\n", 4, &result);
    assert_error(&result, 0, 1, "bad value '0,1' for dk (one instance: a core or other-socket)");
}

static void test_more_errors_than_room(void **state)
{
    (void)state;
    struct placement_error errors[2];
    struct placement_info placement;
    const char *text = "a 1\nb 1\nc 1\nd 1\n";
    assert_int_equal(placement_parse(text, strlen(text), 4, NULL, &placement, errors, 2), 4);
    assert_int_equal(errors[0].line, 1);
    assert_int_equal(errors[1].line, 2);
    assert_int_equal(placement.warnings, 4);
    assert_int_equal(placement_parse(text, strlen(text), 4, NULL, &placement, NULL, 0), 4);
}

static void test_long_lines_rejected(void **state)
{
    (void)state;
    struct result result;
    char text[20000];
    /* Exactly the limit is fine: a 256-character comment. */
    memset(text, '#', PLACEMENT_LINE_LIMIT);
    strcpy(text + PLACEMENT_LINE_LIMIT, "\nfs 1\n");
    parse_text(text, 4, &result);
    assert_ok(&result);
    /* One more character is an error, even for a comment. */
    memset(text, '#', PLACEMENT_LINE_LIMIT + 1);
    strcpy(text + PLACEMENT_LINE_LIMIT + 1, "\nfs 1\n");
    parse_text(text, 4, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 1, "line too long (more than 256 characters)");
    /* A huge value on line 2, with no line ending at all. */
    strcpy(text, "fs 1\nblk ");
    size_t used = strlen(text);
    memset(text + used, '7', sizeof(text) - used - 1);
    text[sizeof(text) - 1] = '\0';
    parse_text(text, 4, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 2, "line too long (more than 256 characters)");
    assert_is_default(&result.placement, 1);
}

/* ---- Application cores -------------------------------------------------- */

static void test_app_list(void **state)
{
    (void)state;
    struct result result;
    parse_text("app 3,0,2\n", 4, &result);
    assert_ok(&result);
    static const uint32_t list[] = {3, 0, 2};
    assert_app_cores(&result.placement, false, 3, list, 3);
    static const uint32_t expected[] = {3, 0, 2, 3, 0};
    for (uint32_t i = 0; i < 5; i++)
        assert_int_equal(placement_app_core(&result.placement, i, 5), expected[i]);
    parse_text("app 2\n", 4, &result);
    for (uint32_t i = 0; i < 8; i++)
        assert_int_equal(placement_app_core(&result.placement, i, 8), 2);
}

/* Preset #7 on 4 cores: free cores 0 and 3, server cores 1 and 2. */
static void test_spread_rule(void **state)
{
    (void)state;
    struct result result;
    parse_text("fs 1\nblk 2\ndk 2\npager 2\napp spread\n", 4, &result);
    assert_ok(&result);
    static const uint32_t order[] = {0, 3, 1, 2};
    assert_app_cores(&result.placement, true, 2, order, 4);
    const struct placement_info *placement = &result.placement;
    /* P <= free cores: only the free ones. */
    assert_int_equal(placement_app_core(placement, 0, 1), 0);
    assert_int_equal(placement_app_core(placement, 0, 2), 0);
    assert_int_equal(placement_app_core(placement, 1, 2), 3);
    /* P > free cores: every core, evenly. */
    static const uint32_t three[] = {0, 3, 1};
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(placement_app_core(placement, i, 3), three[i]);
    uint32_t per_core[4] = {0};
    for (uint32_t i = 0; i < 16; i++)
        per_core[placement_app_core(placement, i, 16)]++;
    for (uint32_t core = 0; core < 4; core++)
        assert_int_equal(per_core[core], 4);
}

/* dk and pager not named are on core 0, which makes core 0 a server core. */
static void test_spread_counts_unnamed_servers(void **state)
{
    (void)state;
    struct result result;
    parse_text("fs 1\nblk 2\napp spread\n", 4, &result);
    assert_ok(&result);
    static const uint32_t order[] = {3, 0, 1, 2};
    assert_app_cores(&result.placement, true, 1, order, 4);
    assert_int_equal(placement_app_core(&result.placement, 0, 1), 3);
    assert_int_equal(placement_app_core(&result.placement, 1, 2), 0);
}

static void test_spread_on_one_core(void **state)
{
    (void)state;
    struct result result;
    parse_text("app spread\n", 1, &result);
    assert_ok(&result);
    static const uint32_t only[] = {0};
    assert_app_cores(&result.placement, true, 0, only, 1);
    assert_int_equal(placement_app_core(&result.placement, 0, 1), 0);
    assert_int_equal(placement_app_core(&result.placement, 5, 9), 0);
}

static void test_spread_with_every_core_free_but_zero(void **state)
{
    (void)state;
    struct result result;
    parse_text("app spread\n", 16, &result);
    assert_ok(&result);
    assert_int_equal(result.placement.app_preferred_count, 15);
    assert_int_equal(result.placement.app_cores[0], 1);
    assert_int_equal(result.placement.app_cores[15], 0);
    for (uint32_t i = 0; i < 15; i++)
        assert_int_equal(placement_app_core(&result.placement, i, 15), i + 1);
}

static void test_default_and_empty_rule(void **state)
{
    (void)state;
    struct placement_info placement;
    memset(&placement, 0x77, sizeof(placement));
    placement_default(8, &placement);
    assert_is_default(&placement, 0);
    assert_int_equal(placement_app_core(&placement, 3, 4), 0);
    placement.app_core_count = 0;
    assert_int_equal(placement_app_core(&placement, 3, 4), 0);
}

/* ---- Server instances --------------------------------------------------- */

static const bool may_have_instances[PLACEMENT_SERVERS] = {PLACEMENT_SERVER_INSTANCES};

static void assert_instances(const struct placement_info *placement, int server,
                             const uint32_t *cores, uint32_t count)
{
    assert_int_equal(placement->server_instance_count[server], count);
    for (uint32_t i = 0; i < count; i++)
        assert_int_equal(placement->server_instance_cores[server][i], cores[i]);
    if (count > 0)
        assert_int_equal(placement->server_core[server], cores[0]);
}

/* A server with one core has one instance there; the optional test server
 * `where` has none unless the file names it. */
static void test_single_cores_are_one_instance(void **state)
{
    (void)state;
    static const uint32_t one[] = {1}, two[] = {2}, zero[] = {0};
    struct result result;
    parse_preset(5, 4, 1, &result);
    assert_ok(&result);
    assert_instances(&result.placement, SERVER_FS, one, 1);
    assert_instances(&result.placement, SERVER_BLK, two, 1);
    assert_instances(&result.placement, SERVER_PAGER, zero, 1);
    assert_instances(&result.placement, SERVER_WHERE, NULL, 0);
    parse_text("where 3\n", 4, &result);
    assert_ok(&result);
    static const uint32_t three[] = {3};
    assert_instances(&result.placement, SERVER_WHERE, three, 1);
    struct placement_info placement;
    placement_default(4, &placement);
    assert_instances(&placement, SERVER_FS, zero, 1);
    assert_instances(&placement, SERVER_WHERE, NULL, 0);
}

static void test_instance_lists(void **state)
{
    (void)state;
    struct result result;
    parse_text("where 3,1,2\nfs 1\n", 4, &result);
    assert_ok(&result);
    static const uint32_t listed[] = {3, 1, 2};
    assert_instances(&result.placement, SERVER_WHERE, listed, 3); /* the file's order */
    char text[128];
    placement_describe(&result.placement, text, sizeof(text));
    assert_string_equal(text, "fs=C1 blk=C0 dk=C0 pager=C0 where=C3,C1,C2 usb=C0 app=C0");
    /* 64 instances fit, a 65th does not. */
    char long_list[PLACEMENT_LINE_LIMIT + 64] = "where 0";
    for (unsigned core = 1; core < SERVER_INSTANCES_MAX; core++) {
        size_t used = strlen(long_list);
        snprintf(long_list + used, sizeof(long_list) - used, ",%u", core);
    }
    parse_text(long_list, 100, &result);
    assert_ok(&result);
    assert_int_equal(result.placement.server_instance_count[SERVER_WHERE], SERVER_INSTANCES_MAX);
    strcat(long_list, ",64");
    parse_text(long_list, 100, &result);
    assert_error(&result, 0, 1, "too many cores for one server (at most 64 instances)");
}

static void test_per_core(void **state)
{
    (void)state;
    struct result result;
    parse_text("where per-core\napp 3,1\n", 4, &result);
    assert_ok(&result);
    static const uint32_t app_cores[] = {1, 3};
    assert_instances(&result.placement, SERVER_WHERE, app_cores, 2); /* increasing order */
    parse_text("where per-core\napp spread\nfs 1\n", 3, &result);
    assert_ok(&result);
    static const uint32_t every_core[] = {0, 1, 2};
    assert_instances(&result.placement, SERVER_WHERE, every_core, 3);
    /* A server with instances does not push applications off its cores;
     * fs on C1 and the others on C0, each alone, do. */
    static const uint32_t spread[] = {2, 0, 1};
    assert_app_cores(&result.placement, true, 1, spread, 3);
    parse_text("where per-core\n", 4, &result); /* app not named: core 0 */
    static const uint32_t zero[] = {0};
    assert_instances(&result.placement, SERVER_WHERE, zero, 1);
    parse_text("app spread\nwhere per-core\n", 100, &result); /* at most 64 */
    assert_ok(&result);
    assert_int_equal(result.placement.server_instance_count[SERVER_WHERE], SERVER_INSTANCES_MAX);
    assert_int_equal(result.placement.server_instance_cores[SERVER_WHERE][63], 63);
}

static void test_instance_errors(void **state)
{
    (void)state;
    struct result result;
    parse_text("where 1,,2\nwhere2 1\n", 4, &result);
    assert_error(&result, 0, 1,
                 "bad value '1,,2' (expected a core, a list like 1,5,9, per-core or other-socket)");
    parse_text("where 1,2,1\n", 4, &result);
    assert_error(&result, 0, 1, "core 1 listed twice for where");
    assert_is_default(&result.placement, 1);
    parse_text("where 1,4\n", 4, &result);
    assert_error(&result, 0, 1, "core 4 does not exist (4 cores)");
    parse_text("where one\n", 4, &result);
    assert_error(&result, 0, 1,
                 "bad value 'one' (expected a core, a list like 1,5,9, per-core or other-socket)");
    parse_text("where per-core,1\n", 4, &result);
    assert_int_equal(result.error_count, 1);
    /* A server whose manifest has no 'instances' line takes one core. */
    parse_text("pager 1,2\ndk per-core\n", 4, &result);
    assert_int_equal(result.error_count, 2);
    assert_error(&result, 0, 1, "bad value '1,2' for pager (one instance: a core or other-socket)");
    assert_error(&result, 1, 2,
                 "bad value 'per-core' for dk (one instance: a core or other-socket)");
    assert_is_default(&result.placement, 2);
}

/* #9 puts FS and BLK on every core when their manifests allow instances;
 * until then the kernel refuses it with the parser's errors. */
static void test_preset_9_instances(void **state)
{
    (void)state;
    struct result result;
    parse_preset(9, 4, 1, &result);
    if (!may_have_instances[SERVER_FS] || !may_have_instances[SERVER_BLK]) {
        assert_int_equal(result.error_count,
                         !may_have_instances[SERVER_FS] + !may_have_instances[SERVER_BLK]);
        assert_is_default(&result.placement, (uint32_t)result.error_count);
        return;
    }
    assert_ok(&result);
    static const uint32_t every_core[] = {0, 1, 2, 3};
    assert_instances(&result.placement, SERVER_FS, every_core, 4);
    assert_instances(&result.placement, SERVER_BLK, every_core, 4);
    static const uint32_t zero[] = {0};
    assert_instances(&result.placement, SERVER_DK, zero, 1);
}

/* ---- Description -------------------------------------------------------- */

static void test_describe(void **state)
{
    (void)state;
    struct result result;
    char text[128];
    parse_preset(5, 4, 1, &result);
    placement_describe(&result.placement, text, sizeof(text));
    assert_string_equal(text, "fs=C1 blk=C2 dk=C0 pager=C0 usb=C0 app=C0");
    parse_preset(7, 4, 1, &result);
    placement_describe(&result.placement, text, sizeof(text));
    assert_string_equal(text, "fs=C1 blk=C2 dk=C2 pager=C2 usb=C2 app=spread(C0,C3|C1,C2)");
    parse_text("app 0,3\n", 4, &result);
    placement_describe(&result.placement, text, sizeof(text));
    assert_string_equal(text, "fs=C0 blk=C0 dk=C0 pager=C0 usb=C0 app=C0,C3");
}

/* usb is declared `beside dk`: unnamed, it takes DK's core, so the spread
 * rule finds no new server core; named, its own. */
static void test_a_server_beside_another_takes_its_core(void **state)
{
    (void)state;
    struct result result;
    parse_text("dk 3\n", 4, &result);
    assert_int_equal(result.placement.server_core[SERVER_USB], 3);
    assert_int_equal(result.placement.server_instance_cores[SERVER_USB][0], 3);
    parse_text("dk 3\nusb 1\n", 4, &result);
    assert_int_equal(result.placement.server_core[SERVER_USB], 1);
    parse_text("fs 1\n", 4, &result);
    assert_int_equal(result.placement.server_core[SERVER_USB], 0);
    parse_preset(6, 4, 1, &result);
    assert_int_equal(result.placement.server_core[SERVER_USB], 1);
    static const uint32_t spread[] = {0, 2, 3, 1};
    assert_app_cores(&result.placement, true, 3, spread, 4);
}

static void test_describe_truncates(void **state)
{
    (void)state;
    struct placement_info placement;
    placement_default(1, &placement);
    char text[10];
    memset(text, 'x', sizeof(text));
    placement_describe(&placement, text, sizeof(text));
    assert_string_equal(text, "fs=C0 blk");
    char untouched = 'u';
    placement_describe(&placement, &untouched, 0);
    assert_int_equal(untouched, 'u');
    char big[1024];
    struct result result;
    parse_text("app spread\n", 64, &result);
    placement_describe(&result.placement, big, sizeof(big));
    assert_true(strlen(big) > 200);
    assert_non_null(strstr(big, "app=spread(C1,C2,"));
    assert_non_null(strstr(big, ",C63|C0)"));
}

/* ---- The memory-node role (memnode CORE) ------------------------------- */

static size_t read_named_preset(const char *name, char *buffer, size_t size)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/build/placements/%s", REPO_ROOT, name);
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        fail_msg("cannot open %s", path);
    size_t length = fread(buffer, 1, size, file);
    assert_true(length < size);
    fclose(file);
    return length;
}

static void test_memnode_core(void **state)
{
    (void)state;
    struct result result;
    parse_text("memnode 1\napp 0\n", 2, &result);
    assert_ok(&result);
    assert_int_equal(result.placement.memnode_placed, 1);
    assert_int_equal(result.placement.memnode_core, 1);
    assert_servers(&result.placement, 0, 0, 0, 0);
    char text[128];
    placement_describe(&result.placement, text, sizeof(text));
    assert_string_equal(text, "fs=C0 blk=C0 dk=C0 pager=C0 usb=C0 app=C0 memnode=C1");
    parse_text("fs 1\n", 2, &result);
    assert_ok(&result);
    assert_int_equal(result.placement.memnode_placed, 0);
    assert_int_equal(result.placement.memnode_core, 0);
}

/* The spread rule keeps applications off the role's core, as off a server's. */
static void test_memnode_core_is_avoided_by_spread(void **state)
{
    (void)state;
    struct result result;
    parse_text("memnode 1\napp spread\n", 4, &result);
    assert_ok(&result);
    static const uint32_t spread[] = {2, 3, 0, 1};
    assert_app_cores(&result.placement, true, 2, spread, 4);
}

static void test_memnode_errors(void **state)
{
    (void)state;
    struct result result;
    parse_text("app 0\nmemnode 1\n", 1, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 2, "core 1 does not exist (1 core)");
    assert_is_default(&result.placement, 1);
    assert_int_equal(result.placement.memnode_placed, 0);
    parse_text("memnode 1\n# x\nmemnode 0\n", 2, &result);
    assert_int_equal(result.error_count, 1);
    assert_error(&result, 0, 3, "duplicate key 'memnode' (first on line 1)");
    assert_int_equal(result.placement.memnode_placed, 0);
    parse_text("memnode 0,1\nmemnode\nmemnode x\n", 2, &result);
    assert_int_equal(result.error_count, 3);
    assert_error(&result, 0, 1, "bad value '0,1' for memnode (expected a core number)");
    assert_error(&result, 1, 2, "malformed line (expected 'key value')");
    assert_error(&result, 2, 3, "duplicate key 'memnode' (first on line 1)");
    parse_text("memnode per-core\n", 2, &result);
    assert_error(&result, 0, 1, "bad value 'per-core' for memnode (expected a core number)");
    parse_text("memnode other-socket\n", 2, &result);
    assert_error(&result, 0, 1, "bad value 'other-socket' for memnode (expected a core number)");
    parse_text("Memnode 1\n", 2, &result);
    assert_error(&result, 0, 1, "unknown key 'Memnode'");
}

/* build/placements/memnode-own-core.conf: the role on core 1, the rest on core 0. */
static void test_memnode_own_core_preset(void **state)
{
    (void)state;
    static const uint32_t core_zero[] = {0};
    char text[4096];
    size_t length = read_named_preset("memnode-own-core.conf", text, sizeof(text));
    struct result result;
    parse_sockets(text, length, 2, 1, &result);
    assert_ok(&result);
    assert_int_equal(result.placement.memnode_placed, 1);
    assert_int_equal(result.placement.memnode_core, 1);
    assert_servers(&result.placement, 0, 0, 0, 0);
    assert_app_cores(&result.placement, false, 1, core_zero, 1);
    parse_sockets(text, length, 1, 1, &result);
    assert_true(result.error_count > 0);
    assert_is_default(&result.placement, (uint32_t)result.error_count);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_presets_on_every_size),
        cmocka_unit_test(test_presets_1_to_5_pin_the_application),
        cmocka_unit_test(test_preset_errors_on_small_machines),
        cmocka_unit_test(test_preset_6_spread),
        cmocka_unit_test(test_preset_7_spread),
        cmocka_unit_test(test_preset_8_other_socket),
        cmocka_unit_test(test_empty_file_is_all_core_zero),
        cmocka_unit_test(test_unnamed_servers_default_to_core_zero),
        cmocka_unit_test(test_comments_tabs_and_trailing_text),
        cmocka_unit_test(test_no_trailing_newline),
        cmocka_unit_test(test_crlf_line_endings),
        cmocka_unit_test(test_success_keeps_the_name),
        cmocka_unit_test(test_error_no_such_core),
        cmocka_unit_test(test_error_unknown_key),
        cmocka_unit_test(test_error_malformed_lines),
        cmocka_unit_test(test_error_duplicate_key),
        cmocka_unit_test(test_error_bad_values),
        cmocka_unit_test(test_more_errors_than_room),
        cmocka_unit_test(test_long_lines_rejected),
        cmocka_unit_test(test_app_list),
        cmocka_unit_test(test_blk_shard_list),
        cmocka_unit_test(test_spread_rule),
        cmocka_unit_test(test_spread_counts_unnamed_servers),
        cmocka_unit_test(test_spread_on_one_core),
        cmocka_unit_test(test_spread_with_every_core_free_but_zero),
        cmocka_unit_test(test_default_and_empty_rule),
        cmocka_unit_test(test_single_cores_are_one_instance),
        cmocka_unit_test(test_instance_lists),
        cmocka_unit_test(test_per_core),
        cmocka_unit_test(test_instance_errors),
        cmocka_unit_test(test_preset_9_instances),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_a_server_beside_another_takes_its_core),
        cmocka_unit_test(test_describe_truncates),
        cmocka_unit_test(test_memnode_core),
        cmocka_unit_test(test_memnode_core_is_avoided_by_spread),
        cmocka_unit_test(test_memnode_errors),
        cmocka_unit_test(test_memnode_own_core_preset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
