/* pager.h: remote paging (seed 004, Teramem). A process gets one pager
 * region; its page faults there go to the pager server as ICA requests, and
 * the pager maps, unmaps and scans the region's blocks through the kernel.
 * Shared by the kernels, the pager server and lib/teramem.c. */
#pragma once
#include <formica/protocol/pager.h>
#include <stdint.h>

#define PAGER_REGION_BASE 0x0000200000000000ull
#define PAGER_REGION_MAX_BYTES (64ull << 30)
#define PAGER_BLOCK_MIN_BYTES 4096u
#define PAGER_BLOCK_MAX_BYTES (1u << 20)

/* System calls 40-44 (formica/syscalls.h numbers them). The calls that touch
 * another process's memory are for the pager that serves its region, and
 * only while that process waits (for a fault or a request): the process then
 * resumes with a fresh TLB, so no other core can hold a stale translation. */
/* SYS_PAGER_REGION (pager pid, bytes) -> base address of the caller's region. */
/* SYS_PAGER_MAP (pid, address, bytes, data ICA id or 0) -> 0: maps a block; the
 *   ICA's frames move into the process (zero copy) or, with 0, fresh zeroed frames. */
/* SYS_PAGER_UNMAP (pid, address, bytes, keep) -> with keep, the id of a new data
 *   ICA holding the block's frames (for a swap-out); without, 0 (frames freed). */
/* SYS_PAGER_SCAN (pid, address, bytes, flags) -> PAGER_SCAN_* bits of the block. */
/* SYS_PAGER_RELEASE () -> 0: ends the caller's region and frees its memory. */
#define PAGER_SCAN_ACCESSED 1u       /* a page was referenced since the last clear */
#define PAGER_SCAN_DIRTY 2u          /* a page was written since it was mapped */
#define PAGER_SCAN_PRESENT 4u        /* every page of the block is mapped */
#define PAGER_SCAN_CLEAR_ACCESSED 1u /* flag: clear the accessed bits after reading */

/* The pager server's requests: protocol/pager.messages. */
enum pager_policy { PAGER_POLICY_LRU = 1, PAGER_POLICY_FIFO = 2 };
enum pager_backend {
    PAGER_BACKEND_NODE = 1,
    PAGER_BACKEND_NVM = 2,
    PAGER_BACKEND_DISK = 3,
    PAGER_BACKEND_BLOCK = 4, /* a raw block device (e.g. an NBD export) as remote memory */
    PAGER_BACKEND_VEMS =
        5, /* no pager: a file mapped through BLK's NVM tier (lib/teramem_vems.c) */
};
#define PAGER_MAX_REPLICAS 4
