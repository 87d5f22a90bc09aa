/* nvme_identity.h: what DK takes from IDENTIFY data: the controller's
 * namespace count, transfer limit and write cache; a namespace's size and
 * block size. Pure parsing of the 4 KiB pages (unit-tested on the host). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct nvme_controller_identity {
    uint32_t namespaces;         /* NN */
    uint32_t max_transfer_bytes; /* MDTS (4 KiB pages), capped at one PRP list page */
    bool volatile_cache;         /* VWC bit 0 */
    char serial[20];             /* SN, its trailing spaces dropped (zeros) */
};

struct nvme_namespace_identity {
    uint64_t blocks;      /* NSZE */
    uint32_t block_shift; /* log2 of the block size of the format in use (FLBAS) */
};

void nvme_parse_controller(const uint8_t *data, struct nvme_controller_identity *identity);
/* 0, or -E_NOT_FOUND for an inactive namespace (no blocks), -E_INVALID for
 * a block size outside 512..4096 bytes or a format with metadata. */
long nvme_parse_namespace(const uint8_t *data, struct nvme_namespace_identity *identity);
