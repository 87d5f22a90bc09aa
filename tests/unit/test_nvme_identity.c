/* test_nvme_identity.c: host unit tests of servers/disk/nvme_identity.c on
 * hand-made IDENTIFY pages: NN, MDTS (with its limits) and VWC of a
 * controller; size and block size of a namespace, inactive ones, 4 KiB
 * formats, and formats DK refuses (too small, too large, with metadata). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <formica/errors.h> /* lib/include, through -idirafter */
#include "nvme_identity.h"

static uint8_t page[4096];

static void controller_page(uint32_t namespaces, uint8_t mdts, uint8_t vwc)
{
    memset(page, 0, sizeof(page));
    memcpy(page + 516, &namespaces, sizeof(namespaces));
    page[77] = mdts;
    page[525] = vwc;
}

/* Namespace of `blocks`, LBA formats 0 (512 B) and 1 (`shift`, `metadata`), format `in_use`. */
static void namespace_page(uint64_t blocks, uint8_t shift, uint16_t metadata, uint8_t in_use)
{
    memset(page, 0, sizeof(page));
    memcpy(page, &blocks, sizeof(blocks));
    page[25] = 1; /* NLBAF: two formats */
    page[26] = in_use;
    uint32_t formats[2] = {9u << 16, (uint32_t)shift << 16 | metadata};
    memcpy(page + 128, formats, sizeof(formats));
}

static void test_controller_fields(void **state)
{
    (void)state;
    struct nvme_controller_identity identity;
    controller_page(256, 7, 1);
    nvme_parse_controller(page, &identity);
    assert_int_equal(identity.namespaces, 256);
    assert_int_equal(identity.max_transfer_bytes, 4096u << 7); /* QEMU's 512 KiB */
    assert_true(identity.volatile_cache);
    controller_page(1, 5, 0x6); /* VWC bit 0 clear, other bits set */
    nvme_parse_controller(page, &identity);
    assert_int_equal(identity.max_transfer_bytes, 128 * 1024);
    assert_false(identity.volatile_cache);
    memcpy(page + 4, "f803i1a2b           ", 20); /* SN: ASCII, space-padded */
    nvme_parse_controller(page, &identity);
    assert_memory_equal(identity.serial, "f803i1a2b\0\0\0\0\0\0\0\0\0\0\0", 20);
}

static void test_transfer_limit_is_one_prp_list(void **state)
{
    (void)state;
    struct nvme_controller_identity identity;
    controller_page(1, 0, 0); /* MDTS 0: no limit from the controller */
    nvme_parse_controller(page, &identity);
    assert_int_equal(identity.max_transfer_bytes, 2u << 20);
    controller_page(1, 12, 0); /* 16 MiB: more than one list page describes */
    nvme_parse_controller(page, &identity);
    assert_int_equal(identity.max_transfer_bytes, 2u << 20);
}

static void test_namespace_512_and_4096(void **state)
{
    (void)state;
    struct nvme_namespace_identity identity;
    namespace_page(16384, 12, 0, 0);
    assert_int_equal(nvme_parse_namespace(page, &identity), 0);
    assert_int_equal(identity.blocks, 16384);
    assert_int_equal(identity.block_shift, 9);
    namespace_page(2048, 12, 0, 1);
    assert_int_equal(nvme_parse_namespace(page, &identity), 0);
    assert_int_equal(identity.block_shift, 12);
}

static void test_unusable_namespaces(void **state)
{
    (void)state;
    struct nvme_namespace_identity identity;
    namespace_page(0, 9, 0, 0);
    assert_int_equal(nvme_parse_namespace(page, &identity), -E_NOT_FOUND); /* inactive */
    namespace_page(100, 8, 0, 1);
    assert_int_equal(nvme_parse_namespace(page, &identity), -E_INVALID); /* 256-byte blocks */
    namespace_page(100, 13, 0, 1);
    assert_int_equal(nvme_parse_namespace(page, &identity), -E_INVALID); /* 8 KiB blocks */
    namespace_page(100, 12, 8, 1);
    assert_int_equal(nvme_parse_namespace(page, &identity), -E_INVALID); /* 8 metadata bytes */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_controller_fields),
        cmocka_unit_test(test_transfer_limit_is_one_prp_list),
        cmocka_unit_test(test_namespace_512_and_4096),
        cmocka_unit_test(test_unusable_namespaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
