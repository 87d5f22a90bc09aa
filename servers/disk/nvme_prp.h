/* nvme_prp.h: physical region page (PRP) entries for one NVMe command that
 * moves a physically contiguous buffer: PRP1, and PRP2 as the second page or
 * as the address of a PRP list holding the pages after the first. */
#pragma once
#include <stdint.h>

#define NVME_PAGE_BYTES 4096u
#define NVME_PRP_LIST_ENTRIES                                                                      \
    (NVME_PAGE_BYTES / sizeof(uint64_t)) /* one list page, no chaining                             \
                                          */

struct nvme_prp {
    uint64_t prp1;
    uint64_t prp2;
    unsigned list_entries; /* entries written to the list (0 when PRP2 is not a list) */
};

/* Fills `prp` for `bytes` (> 0) at `physical` (4-byte aligned); `list` is a
 * page of `capacity` entries at `list_physical`, used when the buffer spans
 * more than two pages. -1 when the buffer is misaligned, empty or needs more
 * than `capacity` list entries; 0 otherwise. */
int nvme_prp_fill(uint64_t physical, uint64_t bytes, uint64_t *list, uint64_t list_physical,
                  unsigned capacity, struct nvme_prp *prp);
