/* test_madt.c: host unit tests of mkernel/madt.c, the ACPI MADT parser: real
 * tables (this machine's firmware MADT and iasl-compiled fixtures) and tables
 * built here for every error path, duplicates, overflow and boot-core order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "madt.h"
#include "acpi_tables.h"

#ifndef FIXTURE_DIR
#define FIXTURE_DIR "fixtures"
#endif

/* ---- tables built in C ---- */

struct table {
    uint8_t bytes[8192]; /* room for MADT_MAX_CORES + a few x2APIC entries (16 bytes each) */
    size_t length;
};

static void table_begin(struct table *table, uint32_t lapic_address, uint32_t flags)
{
    memset(table, 0, sizeof(*table));
    struct acpi_header header = {.signature = "APIC",
                                 .revision = 5,
                                 .oem_id = "FORMIC",
                                 .oem_table_id = "UNITTEST",
                                 .oem_revision = 1};
    memcpy(table->bytes, &header, sizeof(header));
    memcpy(table->bytes + 36, &lapic_address, 4);
    memcpy(table->bytes + 40, &flags, 4);
    table->length = 44;
}

static void table_add(struct table *table, const void *entry, size_t length)
{
    assert_true(table->length + length <= sizeof(table->bytes));
    memcpy(table->bytes + table->length, entry, length);
    table->length += length;
}

static void add_lapic(struct table *table, uint8_t uid, uint8_t apic_id, uint32_t flags)
{
    uint8_t entry[8] = {0, 8, uid, apic_id};
    memcpy(entry + 4, &flags, 4);
    table_add(table, entry, sizeof(entry));
}

static void add_x2apic(struct table *table, uint32_t apic_id, uint32_t uid, uint32_t flags)
{
    uint8_t entry[16] = {9, 16};
    memcpy(entry + 4, &apic_id, 4);
    memcpy(entry + 8, &flags, 4);
    memcpy(entry + 12, &uid, 4);
    table_add(table, entry, sizeof(entry));
}

static void add_ioapic(struct table *table, uint8_t id, uint32_t address, uint32_t base)
{
    uint8_t entry[12] = {1, 12, id, 0};
    memcpy(entry + 4, &address, 4);
    memcpy(entry + 8, &base, 4);
    table_add(table, entry, sizeof(entry));
}

static void add_source_override(struct table *table, uint8_t bus, uint8_t source, uint32_t gsi,
                                uint16_t flags)
{
    uint8_t entry[10] = {2, 10, bus, source};
    memcpy(entry + 4, &gsi, 4);
    memcpy(entry + 8, &flags, 2);
    table_add(table, entry, sizeof(entry));
}

static void add_lapic_override(struct table *table, uint64_t address)
{
    uint8_t entry[12] = {5, 12};
    memcpy(entry + 4, &address, 8);
    table_add(table, entry, sizeof(entry));
}

/* Writes the length field and a correct checksum. */
static void table_finish(struct table *table)
{
    uint32_t length = (uint32_t)table->length;
    memcpy(table->bytes + 4, &length, 4);
    table->bytes[9] = 0;
    uint8_t sum = 0;
    for (size_t i = 0; i < table->length; i++)
        sum = (uint8_t)(sum + table->bytes[i]);
    table->bytes[9] = (uint8_t)(0 - sum);
}

/* Parses `available` bytes from an exactly sized heap copy, so that ASan
 * reports any read past what the parser was allowed to see. */
static int parse_exact(const void *bytes, size_t available, struct madt_info *info)
{
    uint8_t *copy = malloc(available > 0 ? available : 1);
    assert_non_null(copy);
    memcpy(copy, bytes, available);
    int result = madt_parse(copy, available, info);
    free(copy);
    return result;
}

static int parse_table(const struct table *table, struct madt_info *info)
{
    return parse_exact(table->bytes, table->length, info);
}

/* A small valid table: two enabled cores and an IOAPIC. */
static void build_basic(struct table *table)
{
    table_begin(table, 0xfee00000, 1);
    add_lapic(table, 0, 0, 1);
    add_lapic(table, 1, 1, 1);
    add_ioapic(table, 2, 0xfec00000, 0);
    table_finish(table);
}

static void *read_fixture(const char *name, size_t *length)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", FIXTURE_DIR, name);
    FILE *file = fopen(path, "rb");
    if (file == NULL)
        fail_msg("cannot open fixture %s", path);
    uint8_t *bytes = malloc(65536);
    assert_non_null(bytes);
    *length = fread(bytes, 1, 65536, file);
    fclose(file);
    assert_true(*length > 0);
    return bytes;
}

/* ---- real tables ---- */

static void test_host_firmware_table(void **state)
{
    (void)state;
    size_t length;
    uint8_t *bytes = read_fixture("madt-host.bin", &length);
    struct madt_info info;
    assert_int_equal(parse_exact(bytes, length, &info), MADT_OK);
    /* The table copied from the machine the fixtures were made on: a
     * Firecracker VM (OEM "FIRECK") with 2 vCPUs and no 8259 PICs. */
    assert_int_equal(info.lapic_address, 0xfee00000);
    assert_int_equal(info.legacy_pics, 0);
    assert_int_equal(info.core_count, 2);
    assert_int_equal(info.cores[0].apic_id, 0);
    assert_int_equal(info.cores[1].apic_id, 1);
    assert_int_equal(info.cores[1].processor_uid, 1);
    assert_int_equal(info.cores_disabled, 0);
    assert_int_equal(info.cores_ignored, 0);
    assert_int_equal(info.ioapic_count, 1);
    assert_int_equal(info.ioapics[0].id, 0);
    assert_int_equal(info.ioapics[0].address, 0xfec00000);
    assert_int_equal(info.ioapics[0].interrupt_base, 0);
    free(bytes);
}

static void test_iasl_xapic_four_cores(void **state)
{
    (void)state;
    size_t length;
    uint8_t *bytes = read_fixture("madt-xapic4.aml", &length);
    struct madt_info info;
    assert_int_equal(parse_exact(bytes, length, &info), MADT_OK);
    assert_int_equal(info.lapic_address, 0xfed00000); /* from the override entry */
    assert_int_equal(info.legacy_pics, 1);
    assert_int_equal(info.core_count, 3);
    assert_int_equal(info.cores[0].apic_id, 0);
    assert_int_equal(info.cores[1].apic_id, 1);
    assert_int_equal(info.cores[2].apic_id, 3);
    assert_int_equal(info.cores[2].processor_uid, 3);
    assert_int_equal(info.cores_disabled, 1);
    assert_int_equal(info.ioapic_count, 1);
    assert_int_equal(info.ioapics[0].id, 8);
    assert_int_equal(info.ioapics[0].address, 0xfec00000);
    free(bytes);
}

static void test_iasl_x2apic(void **state)
{
    (void)state;
    size_t length;
    uint8_t *bytes = read_fixture("madt-x2apic.aml", &length);
    struct madt_info info;
    assert_int_equal(parse_exact(bytes, length, &info), MADT_OK);
    assert_int_equal(info.lapic_address, 0xfee00000);
    assert_int_equal(info.legacy_pics, 0);
    assert_int_equal(info.core_count, 3);
    assert_int_equal(info.cores[0].apic_id, 0);
    assert_int_equal(info.cores[1].apic_id, 0x100);
    assert_int_equal(info.cores[1].processor_uid, 0x101);
    assert_int_equal(info.cores[2].apic_id, 0x10000);
    assert_int_equal(info.cores[2].processor_uid, 0x103);
    assert_int_equal(info.cores_disabled, 1); /* online-capable but not enabled */
    assert_int_equal(info.ioapic_count, 2);
    assert_int_equal(info.ioapics[1].id, 1);
    assert_int_equal(info.ioapics[1].address, 0xfec01000);
    assert_int_equal(info.ioapics[1].interrupt_base, 24);
    free(bytes);
}

/* Every truncation of a real table is refused cleanly (no read past it). */
static void test_fixture_truncations(void **state)
{
    (void)state;
    const char *names[] = {"madt-host.bin", "madt-xapic4.aml", "madt-x2apic.aml"};
    for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++) {
        size_t length;
        uint8_t *bytes = read_fixture(names[n], &length);
        struct madt_info info;
        for (size_t available = 0; available < length; available++) {
            int result = parse_exact(bytes, available, &info);
            assert_true(result == MADT_ERROR_TOO_SHORT || result == MADT_ERROR_LENGTH);
        }
        free(bytes);
    }
}

/* Every single-byte corruption (checksum repaired) gives a result, never a crash. */
static void test_fixture_byte_corruptions(void **state)
{
    (void)state;
    size_t length;
    uint8_t *bytes = read_fixture("madt-x2apic.aml", &length);
    const uint8_t values[] = {0x00, 0x01, 0x02, 0x7f, 0xff};
    for (size_t offset = 0; offset < length; offset++) {
        for (size_t v = 0; v < sizeof(values); v++) {
            uint8_t *copy = malloc(length);
            assert_non_null(copy);
            memcpy(copy, bytes, length);
            copy[offset] = values[v];
            uint32_t declared;
            memcpy(&declared, copy + 4, 4);
            if (offset != 9 && declared <= length) {
                copy[9] = 0;
                uint8_t sum = 0;
                for (size_t i = 0; i < declared; i++)
                    sum = (uint8_t)(sum + copy[i]);
                copy[9] = (uint8_t)(0 - sum);
            }
            struct madt_info info;
            int result = madt_parse(copy, length, &info);
            assert_true(result <= MADT_OK && result >= MADT_ERROR_NO_CORES);
            assert_true(info.core_count <= MADT_MAX_CORES);
            assert_true(info.ioapic_count <= MADT_MAX_IOAPICS);
            free(copy);
        }
    }
    free(bytes);
}

/* ---- built tables: success paths ---- */

static void test_basic_built_table(void **state)
{
    (void)state;
    struct table table;
    build_basic(&table);
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_OK);
    assert_int_equal(info.core_count, 2);
    assert_int_equal(info.ioapic_count, 1);
    assert_int_equal(info.ioapics[0].id, 2);
    /* Extra readable bytes after the table are not looked at. */
    uint8_t padded[sizeof(table.bytes)];
    memcpy(padded, table.bytes, table.length);
    memset(padded + table.length, 0xee, 64);
    assert_int_equal(parse_exact(padded, table.length + 64, &info), MADT_OK);
    assert_int_equal(info.core_count, 2);
}

static void test_unknown_entries_skipped(void **state)
{
    (void)state;
    struct table table;
    table_begin(&table, 0xfee00000, 0);
    const uint8_t unknown[] = {0x7f, 5, 1, 2, 3};
    const uint8_t nmi[] = {4, 6, 0xff, 5, 0, 1};
    const uint8_t gicc_like[] = {0x0b, 2};
    table_add(&table, unknown, sizeof(unknown));
    add_lapic(&table, 0, 4, 1);
    table_add(&table, nmi, sizeof(nmi));
    table_add(&table, gicc_like, sizeof(gicc_like));
    table_finish(&table);
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_OK);
    assert_int_equal(info.core_count, 1);
    assert_int_equal(info.cores[0].apic_id, 4);
    assert_int_equal(info.legacy_pics, 0);
}

static void test_lapic_override_64bit(void **state)
{
    (void)state;
    struct table table;
    table_begin(&table, 0xfee00000, 1);
    add_lapic(&table, 0, 0, 1);
    add_lapic_override(&table, 0x0000001234567000ull);
    table_finish(&table);
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_OK);
    assert_int_equal(info.lapic_address, 0x0000001234567000ull);
}

/* Type 2 as QEMU writes it: IRQ 0 on GSI 2, PCI IRQs level/active high;
 * entries for a bus other than ISA and a short entry are handled. */
static void test_source_overrides(void **state)
{
    (void)state;
    struct table table;
    table_begin(&table, 0xfee00000, 1);
    add_lapic(&table, 0, 0, 1);
    add_source_override(&table, 0, 0, 2, 0);
    add_source_override(&table, 0, 11, 11, 0x000d);
    add_source_override(&table, 1, 5, 5, 0x000d); /* not ISA: ignored */
    table_finish(&table);
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_OK);
    assert_int_equal(info.override_count, 2);
    assert_int_equal(info.overrides[0].source, 0);
    assert_int_equal(info.overrides[0].gsi, 2);
    assert_int_equal(info.overrides[1].source, 11);
    assert_int_equal(info.overrides[1].flags, 0x000d);

    uint8_t short_entry[8] = {2, 8, 0, 9};
    table_begin(&table, 0xfee00000, 1);
    add_lapic(&table, 0, 0, 1);
    table_add(&table, short_entry, sizeof(short_entry));
    table_finish(&table);
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_ENTRY);
}

static void test_duplicate_apic_ids_counted_once(void **state)
{
    (void)state;
    struct table table;
    table_begin(&table, 0xfee00000, 1);
    add_lapic(&table, 0, 0, 1);
    add_lapic(&table, 1, 1, 1);
    add_lapic(&table, 5, 0, 1);  /* same APIC id as the first */
    add_x2apic(&table, 1, 9, 1); /* same id again, as an x2APIC entry */
    add_x2apic(&table, 300, 10, 1);
    add_x2apic(&table, 300, 11, 1);
    table_finish(&table);
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_OK);
    assert_int_equal(info.core_count, 3);
    assert_int_equal(info.cores[0].apic_id, 0);
    assert_int_equal(info.cores[0].processor_uid, 0); /* the first entry wins */
    assert_int_equal(info.cores[1].apic_id, 1);
    assert_int_equal(info.cores[2].apic_id, 300);
    assert_int_equal(info.cores[2].processor_uid, 10);
}

static void test_more_than_max_cores_ignored(void **state)
{
    (void)state;
    struct table table;
    table_begin(&table, 0xfee00000, 1);
    for (uint32_t id = 0; id < MADT_MAX_CORES + 6; id++)
        add_x2apic(&table, id * 2, id, 1);
    add_x2apic(&table, 0, 99, 1);   /* a duplicate is not an ignored core */
    add_x2apic(&table, 500, 98, 0); /* a disabled one is counted as disabled */
    table_finish(&table);
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_OK);
    assert_int_equal(info.core_count, MADT_MAX_CORES);
    assert_int_equal(info.cores_ignored, 6);
    assert_int_equal(info.cores_disabled, 1);
    assert_int_equal(info.cores[MADT_MAX_CORES - 1].apic_id, 2 * (MADT_MAX_CORES - 1));
}

static void test_more_than_8_ioapics_kept_to_8(void **state)
{
    (void)state;
    struct table table;
    table_begin(&table, 0xfee00000, 1);
    add_lapic(&table, 0, 0, 1);
    for (uint8_t id = 0; id < 10; id++)
        add_ioapic(&table, id, 0xfec00000 + id * 0x1000u, id * 24u);
    table_finish(&table);
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_OK);
    assert_int_equal(info.ioapic_count, MADT_MAX_IOAPICS);
    assert_int_equal(info.ioapics[7].id, 7);
    assert_int_equal(info.ioapics[7].interrupt_base, 7 * 24);
}

/* ---- built tables: errors ---- */

static void test_too_short(void **state)
{
    (void)state;
    struct table table;
    build_basic(&table);
    struct madt_info info;
    assert_int_equal(parse_exact(table.bytes, 0, &info), MADT_ERROR_TOO_SHORT);
    assert_int_equal(parse_exact(table.bytes, 36, &info), MADT_ERROR_TOO_SHORT);
    assert_int_equal(parse_exact(table.bytes, 43, &info), MADT_ERROR_TOO_SHORT);
    assert_int_equal(info.core_count, 0);
}

static void test_bad_signature(void **state)
{
    (void)state;
    struct table table;
    build_basic(&table);
    memcpy(table.bytes, "FACP", 4);
    table_finish(&table);
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_SIGNATURE);
    memcpy(table.bytes, "apic", 4);
    table_finish(&table);
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_SIGNATURE);
}

static void test_length_beyond_available(void **state)
{
    (void)state;
    struct table table;
    build_basic(&table);
    struct madt_info info;
    assert_int_equal(parse_exact(table.bytes, table.length - 1, &info), MADT_ERROR_LENGTH);
    uint32_t huge = 0xffffffff;
    memcpy(table.bytes + 4, &huge, 4);
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_LENGTH);
    /* A length smaller than the fixed header is refused as well. */
    uint32_t small = 36;
    memcpy(table.bytes + 4, &small, 4);
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_LENGTH);
}

static void test_bad_checksum(void **state)
{
    (void)state;
    struct table table;
    build_basic(&table);
    table.bytes[table.length - 1] ^= 0x01;
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_CHECKSUM);
    build_basic(&table);
    table.bytes[9]++;
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_CHECKSUM);
}

static void test_entry_length_zero_or_one(void **state)
{
    (void)state;
    for (uint8_t length = 0; length < 2; length++) {
        struct table table;
        table_begin(&table, 0xfee00000, 1);
        add_lapic(&table, 0, 0, 1);
        const uint8_t bad[] = {0x7f, length, 0, 0};
        table_add(&table, bad, sizeof(bad));
        table_finish(&table);
        struct madt_info info;
        assert_int_equal(parse_table(&table, &info), MADT_ERROR_ENTRY);
    }
}

static void test_entry_running_past_end(void **state)
{
    (void)state;
    struct table table;
    table_begin(&table, 0xfee00000, 1);
    add_lapic(&table, 0, 0, 1);
    add_lapic(&table, 1, 1, 1);
    table.bytes[table.length - 8 + 1] = 9; /* last entry claims one byte more than is left */
    table_finish(&table);
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_ENTRY);
    /* A lone trailing byte cannot even hold an entry header. */
    table_begin(&table, 0xfee00000, 1);
    add_lapic(&table, 0, 0, 1);
    const uint8_t lone = 0;
    table_add(&table, &lone, 1);
    table_finish(&table);
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_ENTRY);
}

static void test_truncated_entries(void **state)
{
    (void)state;
    /* Each known entry type with a length one short of its real size. */
    const uint8_t x2apic[15] = {9, 15, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    const uint8_t lapic[7] = {0, 7, 0, 0, 1, 0, 0};
    const uint8_t ioapic[11] = {1, 11, 0};
    const uint8_t override[11] = {5, 11, 0};
    const uint8_t *entries[] = {x2apic, lapic, ioapic, override};
    const size_t lengths[] = {sizeof(x2apic), sizeof(lapic), sizeof(ioapic), sizeof(override)};
    for (size_t i = 0; i < 4; i++) {
        struct table table;
        table_begin(&table, 0xfee00000, 1);
        add_lapic(&table, 0, 0, 1);
        table_add(&table, entries[i], lengths[i]);
        table_finish(&table);
        struct madt_info info;
        assert_int_equal(parse_table(&table, &info), MADT_ERROR_ENTRY);
    }
    /* An x2APIC entry cut short by the end of the table itself. */
    struct table table;
    table_begin(&table, 0xfee00000, 1);
    add_lapic(&table, 0, 0, 1);
    add_x2apic(&table, 7, 7, 1);
    table.length -= 4;
    table_finish(&table);
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_ENTRY);
}

static void test_no_enabled_cores(void **state)
{
    (void)state;
    struct table table;
    table_begin(&table, 0xfee00000, 1);
    struct madt_info info;
    table_finish(&table);
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_NO_CORES);
    table_begin(&table, 0xfee00000, 1);
    add_lapic(&table, 0, 0, 0);
    add_lapic(&table, 1, 1, 2); /* online-capable only */
    add_x2apic(&table, 400, 2, 0);
    add_ioapic(&table, 0, 0xfec00000, 0);
    table_finish(&table);
    assert_int_equal(parse_table(&table, &info), MADT_ERROR_NO_CORES);
    assert_int_equal(info.core_count, 0);
    assert_int_equal(info.cores_disabled, 3);
}

static void test_error_texts(void **state)
{
    (void)state;
    for (int error = MADT_OK; error >= MADT_ERROR_NO_CORES; error--) {
        const char *text = madt_error_text(error);
        assert_non_null(text);
        assert_true(strlen(text) > 0);
        assert_string_not_equal(text, "unknown error");
    }
    assert_string_equal(madt_error_text(-100), "unknown error");
    assert_string_equal(madt_error_text(3), "unknown error");
}

static void test_put_boot_core_first(void **state)
{
    (void)state;
    struct madt_info info;
    memset(&info, 0, sizeof(info));
    info.core_count = 4;
    for (uint32_t i = 0; i < 4; i++)
        info.cores[i] = (struct madt_core){.apic_id = 10 + i, .processor_uid = i};
    assert_int_equal(madt_put_boot_core_first(&info, 12), 0);
    const uint32_t order[] = {12, 10, 11, 13};
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(info.cores[i].apic_id, order[i]);
    assert_int_equal(info.cores[0].processor_uid, 2);
    assert_int_equal(info.core_count, 4);
    /* Already first: nothing moves. */
    assert_int_equal(madt_put_boot_core_first(&info, 12), 0);
    assert_int_equal(info.cores[1].apic_id, 10);
    /* The last one. */
    assert_int_equal(madt_put_boot_core_first(&info, 13), 0);
    const uint32_t order2[] = {13, 12, 10, 11};
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(info.cores[i].apic_id, order2[i]);
    /* Absent: -1 and unchanged. */
    struct madt_info before = info;
    assert_int_equal(madt_put_boot_core_first(&info, 99), -1);
    assert_memory_equal(&before, &info, sizeof(info));
}

static void test_put_boot_core_first_full_table(void **state)
{
    (void)state;
    struct table table;
    table_begin(&table, 0xfee00000, 1);
    for (uint32_t id = 0; id < MADT_MAX_CORES; id++)
        add_x2apic(&table, id, id, 1);
    table_finish(&table);
    struct madt_info info;
    assert_int_equal(parse_table(&table, &info), MADT_OK);
    assert_int_equal(madt_put_boot_core_first(&info, MADT_MAX_CORES - 1), 0);
    assert_int_equal(info.cores[0].apic_id, MADT_MAX_CORES - 1);
    for (uint32_t i = 1; i < MADT_MAX_CORES; i++)
        assert_int_equal(info.cores[i].apic_id, i - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_firmware_table),
        cmocka_unit_test(test_iasl_xapic_four_cores),
        cmocka_unit_test(test_iasl_x2apic),
        cmocka_unit_test(test_fixture_truncations),
        cmocka_unit_test(test_fixture_byte_corruptions),
        cmocka_unit_test(test_basic_built_table),
        cmocka_unit_test(test_unknown_entries_skipped),
        cmocka_unit_test(test_lapic_override_64bit),
        cmocka_unit_test(test_duplicate_apic_ids_counted_once),
        cmocka_unit_test(test_more_than_max_cores_ignored),
        cmocka_unit_test(test_more_than_8_ioapics_kept_to_8),
        cmocka_unit_test(test_too_short),
        cmocka_unit_test(test_bad_signature),
        cmocka_unit_test(test_length_beyond_available),
        cmocka_unit_test(test_bad_checksum),
        cmocka_unit_test(test_entry_length_zero_or_one),
        cmocka_unit_test(test_entry_running_past_end),
        cmocka_unit_test(test_truncated_entries),
        cmocka_unit_test(test_no_enabled_cores),
        cmocka_unit_test(test_error_texts),
        cmocka_unit_test(test_put_boot_core_first),
        cmocka_unit_test(test_put_boot_core_first_full_table),
        cmocka_unit_test(test_source_overrides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
