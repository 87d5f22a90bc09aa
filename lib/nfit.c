/* nfit.c: the NFIT's persistent-memory ranges (formica/nfit.h). */
#include <formica/errors.h>
#include <formica/nfit.h>
#include <string.h>

#define NFIT_FIRST_STRUCTURE 40 /* the ACPI header (36 bytes) + 4 reserved bytes */
#define NFIT_SPA_TYPE 0
#define NFIT_SPA_BYTES 56
#define SPA_GUID_OFFSET 16
#define SPA_BASE_OFFSET 32
#define SPA_LENGTH_OFFSET 40

/* 66F0D379-B4F3-4074-AC43-0D3318B78CDB, as stored (mixed endian). */
static const uint8_t pmem_guid[16] = {0x79, 0xd3, 0xf0, 0x66, 0xf3, 0xb4, 0x74, 0x40,
                                      0xac, 0x43, 0x0d, 0x33, 0x18, 0xb7, 0x8c, 0xdb};

static uint16_t read16(const uint8_t *bytes)
{
    return (uint16_t)(bytes[0] | bytes[1] << 8);
}

static uint64_t read64(const uint8_t *bytes)
{
    uint64_t value;
    memcpy(&value, bytes, 8);
    return value;
}

static int is_pmem_range(const uint8_t *structure, uint16_t type, uint16_t size)
{
    return type == NFIT_SPA_TYPE && size >= NFIT_SPA_BYTES &&
           memcmp(structure + SPA_GUID_OFFSET, pmem_guid, 16) == 0 &&
           read64(structure + SPA_LENGTH_OFFSET) != 0;
}

long nfit_pmem_range(const void *table, size_t length, unsigned index, uint64_t *base,
                     uint64_t *bytes)
{
    const uint8_t *nfit = table;
    if (length < NFIT_FIRST_STRUCTURE || memcmp(nfit, "NFIT", 4) != 0)
        return -E_INVALID;
    uint32_t declared;
    memcpy(&declared, nfit + 4, 4);
    if (declared < NFIT_FIRST_STRUCTURE || declared > length)
        return -E_INVALID;
    unsigned seen = 0;
    for (size_t at = NFIT_FIRST_STRUCTURE; at + 4 <= declared;) {
        uint16_t type = read16(nfit + at), size = read16(nfit + at + 2);
        if (size < 4 || at + size > declared)
            return -E_INVALID;
        if (is_pmem_range(nfit + at, type, size) && seen++ == index) {
            *base = read64(nfit + at + SPA_BASE_OFFSET);
            *bytes = read64(nfit + at + SPA_LENGTH_OFFSET);
            return 0;
        }
        at += size;
    }
    return -E_NOT_FOUND;
}

long nfit_role_index(const char *roles, const char *role)
{
    if (roles == NULL || roles[0] == '\0')
        roles = "pager";
    size_t wanted = strlen(role);
    long index = 0;
    for (const char *at = roles;; index++) {
        const char *end = strchr(at, ',');
        size_t length = end != NULL ? (size_t)(end - at) : strlen(at);
        if (length == wanted && memcmp(at, role, wanted) == 0)
            return index;
        if (end == NULL)
            return -E_NOT_FOUND;
        at = end + 1;
    }
}

long nfit_pmem_range_by_address(const void *table, size_t length, unsigned index, uint64_t *base,
                                uint64_t *bytes)
{
    uint64_t candidate, candidate_bytes;
    long error = 0;
    for (unsigned i = 0;
         (error = nfit_pmem_range(table, length, i, &candidate, &candidate_bytes)) == 0; i++) {
        unsigned lower = 0;
        uint64_t other, other_bytes;
        for (unsigned j = 0; nfit_pmem_range(table, length, j, &other, &other_bytes) == 0; j++)
            lower += other < candidate;
        if (lower == index) {
            *base = candidate;
            *bytes = candidate_bytes;
            return 0;
        }
    }
    return error;
}
