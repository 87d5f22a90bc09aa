/* nvme_spec.h: what DK's NVMe driver takes from the NVMe 1.4 base
 * specification: controller registers, the 64-byte submission and 16-byte
 * completion entries, opcodes, identify fields and status codes. */
#pragma once
#include <stdint.h>

/* Controller registers (BAR 0). */
#define NVME_CAP 0x00  /* 64-bit capabilities */
#define NVME_VS 0x08   /* version */
#define NVME_CC 0x14   /* controller configuration */
#define NVME_CSTS 0x1c /* controller status */
#define NVME_AQA 0x24  /* admin queue sizes */
#define NVME_ASQ 0x28  /* admin submission queue base (64-bit) */
#define NVME_ACQ 0x30  /* admin completion queue base (64-bit) */
#define NVME_DOORBELLS 0x1000

#define NVME_CAP_MQES(cap) ((uint32_t)((cap)&0xffff) + 1) /* entries per queue at most */
#define NVME_CAP_TIMEOUT_MS(cap) ((uint32_t)(((cap) >> 24) & 0xff) * 500)
#define NVME_CAP_DSTRD(cap) ((uint32_t)(((cap) >> 32) & 0xf)) /* doorbell stride: 4 << DSTRD */
#define NVME_CAP_CSS_NVM(cap) (((cap) >> 37) & 1)
#define NVME_CAP_MPSMIN(cap) ((uint32_t)(((cap) >> 48) & 0xf)) /* 4 KiB << MPSMIN */

#define NVME_CC_ENABLE 1u
#define NVME_CC_IOSQES (6u << 16) /* 2^6 = 64-byte submission entries */
#define NVME_CC_IOCQES (4u << 20) /* 2^4 = 16-byte completion entries */
#define NVME_CSTS_READY 1u
#define NVME_CSTS_FATAL 2u /* controller fatal status */

/* Admin opcodes. */
#define NVME_ADMIN_CREATE_SQ 0x01
#define NVME_ADMIN_CREATE_CQ 0x05
#define NVME_ADMIN_IDENTIFY 0x06
#define NVME_ADMIN_SET_FEATURES 0x09
#define NVME_FEATURE_NUMBER_OF_QUEUES 0x07
#define NVME_IDENTIFY_NAMESPACE 0
#define NVME_IDENTIFY_CONTROLLER 1

/* NVM command set opcodes. */
#define NVME_FLUSH 0x00
#define NVME_WRITE 0x01
#define NVME_READ 0x02

/* Identify controller / namespace fields (byte offsets). */
#define NVME_ID_CTRL_SN 4    /* serial number: 20 ASCII bytes, space-padded */
#define NVME_ID_CTRL_MDTS 77 /* max transfer: 2^MDTS minimum pages, 0 = no limit */
#define NVME_ID_CTRL_NN 516  /* number of namespaces */
#define NVME_ID_CTRL_VWC 525 /* bit 0: volatile write cache present */
#define NVME_ID_NS_NSZE 0    /* namespace size in logical blocks */
#define NVME_ID_NS_FLBAS 26  /* bits 3:0: the LBA format in use */
#define NVME_ID_NS_LBAF 128  /* LBA formats, 4 bytes each: bits 23:16 = log2 block size */

struct nvme_command {
    uint8_t opcode;
    uint8_t flags;
    uint16_t command_id;
    uint32_t namespace_id;
    uint64_t reserved;
    uint64_t metadata;
    uint64_t prp1;
    uint64_t prp2;
    uint32_t cdw10, cdw11, cdw12, cdw13, cdw14, cdw15;
};

struct nvme_completion {
    uint32_t result; /* command specific (dword 0) */
    uint32_t reserved;
    uint16_t sq_head;
    uint16_t sq_id;
    uint16_t command_id;
    uint16_t status; /* bit 0: phase; bits 8:1 status code, 11:9 status code type */
};

_Static_assert(sizeof(struct nvme_command) == 64, "NVMe submission entries are 64 bytes");
_Static_assert(sizeof(struct nvme_completion) == 16, "NVMe completion entries are 16 bytes");

#define NVME_PHASE(status) ((status)&1u)
#define NVME_STATUS_CODE(status) (((status) >> 1) & 0xffu)
#define NVME_STATUS_TYPE(status) (((status) >> 9) & 0x7u)
#define NVME_STATUS_OK(status) ((((status) >> 1) & 0x7ffu) == 0)
