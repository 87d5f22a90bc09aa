/* nvme_prp.c: PRP entries for a physically contiguous transfer (NVMe 1.4,
 * 4.3): the first entry may start inside a page, every later one is a whole
 * page; three or more pages need a PRP list. Pure, unit-tested on the host. */
#include "nvme_prp.h"

#define PAGE_MASK ((uint64_t)NVME_PAGE_BYTES - 1)

int nvme_prp_fill(uint64_t physical, uint64_t bytes, uint64_t *list, uint64_t list_physical,
                  unsigned capacity, struct nvme_prp *prp)
{
    if (bytes == 0 || (physical & 3) != 0)
        return -1;
    uint64_t first_page = physical & ~PAGE_MASK;
    uint64_t pages = ((physical & PAGE_MASK) + bytes + PAGE_MASK) / NVME_PAGE_BYTES;
    prp->prp1 = physical;
    prp->prp2 = 0;
    prp->list_entries = 0;
    if (pages == 2)
        prp->prp2 = first_page + NVME_PAGE_BYTES;
    if (pages <= 2)
        return 0;
    if (pages - 1 > capacity || (list_physical & PAGE_MASK) != 0)
        return -1;
    for (uint64_t page = 1; page < pages; page++)
        list[page - 1] = first_page + page * NVME_PAGE_BYTES;
    prp->prp2 = list_physical;
    prp->list_entries = (unsigned)(pages - 1);
    return 0;
}
