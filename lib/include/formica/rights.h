/* rights.h: the rights a sender needs for each server operation. Every
 * message declaration (protocol/NAME.messages) names one; the generated
 * <server>_operation_right() gives it, and docs/protocol.md lists them. */
#pragma once

#define RIGHT_FILE (1u << 0)       /* FS's file and directory operations */
#define RIGHT_BLOCK (1u << 1)      /* BLK's block reads, writes and sync: FS's data path */
#define RIGHT_DISK (1u << 2)       /* DK's sector reads and writes: BLK's data path */
#define RIGHT_PAGER (1u << 3)      /* a pager region of one's own */
#define RIGHT_KERNEL (1u << 4)     /* requests only the kernel makes (a page fault) */
#define RIGHT_STATISTICS (1u << 5) /* BLK's and DK's counters */
#define RIGHT_TEST (1u << 6)       /* the ICA test and benchmark servers' operations */
