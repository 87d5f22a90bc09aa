/* nvme_identity.c: IDENTIFY controller (CNS 1) and namespace (CNS 0) data,
 * NVMe 1.4 figures 247 and 245, read little-endian at fixed offsets. */
#include "nvme_identity.h"
#include "nvme_prp.h"
#include "nvme_spec.h"
#include <formica/errors.h>
#include <string.h>

#define MDTS_UNLIMITED 0
#define LBAF_METADATA_MASK 0xffffu

static uint32_t max_transfer(uint8_t mdts)
{
    uint32_t list_limit = NVME_PRP_LIST_ENTRIES * NVME_PAGE_BYTES;
    if (mdts == MDTS_UNLIMITED || mdts > 20)
        return list_limit;
    uint64_t limit = (uint64_t)NVME_PAGE_BYTES << mdts;
    return limit < list_limit ? (uint32_t)limit : list_limit;
}

void nvme_parse_controller(const uint8_t *data, struct nvme_controller_identity *identity)
{
    memcpy(&identity->namespaces, data + NVME_ID_CTRL_NN, sizeof(identity->namespaces));
    identity->max_transfer_bytes = max_transfer(data[NVME_ID_CTRL_MDTS]);
    identity->volatile_cache = (data[NVME_ID_CTRL_VWC] & 1) != 0;
    memcpy(identity->serial, data + NVME_ID_CTRL_SN, sizeof(identity->serial));
    for (size_t i = sizeof(identity->serial); i > 0 && identity->serial[i - 1] == ' '; i--)
        identity->serial[i - 1] = '\0';
}

long nvme_parse_namespace(const uint8_t *data, struct nvme_namespace_identity *identity)
{
    memcpy(&identity->blocks, data + NVME_ID_NS_NSZE, sizeof(identity->blocks));
    uint32_t format;
    memcpy(&format, data + NVME_ID_NS_LBAF + 4 * (data[NVME_ID_NS_FLBAS] & 0xf), sizeof(format));
    identity->block_shift = (format >> 16) & 0xff;
    if (identity->blocks == 0)
        return -E_NOT_FOUND;
    if (identity->block_shift < 9 || identity->block_shift > 12 ||
        (format & LBAF_METADATA_MASK) != 0)
        return -E_INVALID;
    return 0;
}
