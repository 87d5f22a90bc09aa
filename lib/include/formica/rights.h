/* rights.h: what a process may do. Each process holds a set of these bits,
 * given at spawn by its parent and never more than the parent holds; the
 * kernel stamps the sender's set into every control ICA (ica_control.
 * sender_rights) and the servers' generated dispatch checks the right each
 * operation declares (protocol/NAME.messages). docs/authority.md has the table
 * of who holds which. */
#pragma once

/* Server operations (the `right` of each declared request). */
#define RIGHT_FILE (1u << 0)       /* FS's file and directory operations */
#define RIGHT_BLOCK (1u << 1)      /* BLK's block reads, writes and sync: FS's data path */
#define RIGHT_DISK (1u << 2)       /* DK's sector reads and writes: BLK's data path */
#define RIGHT_PAGER (1u << 3)      /* a pager region of one's own */
#define RIGHT_KERNEL (1u << 4)     /* requests only the kernel makes (a page fault); no process */
#define RIGHT_STATISTICS (1u << 5) /* BLK's and DK's counters */
#define RIGHT_TEST (1u << 6)       /* the ICA test and benchmark server's operations */
/* What the kernel lets a process do. */
#define RIGHT_SERVER_PRIORITY (1u << 8) /* spawn at PRIORITY_SERVER (the priority ceiling) */
#define RIGHT_POWER_OFF (1u << 9)       /* SYS_POWER_OFF */
#define RIGHT_ADMIN (1u << 10)          /* kill any process but init, servers included */
#define RIGHT_RESERVED_NAME (1u << 11)  /* register a reserved server name (fs, blk, dk, pager) */
#define RIGHT_NEW_ACCOUNT (1u << 12)    /* start a child in a quota account of its own */

#define RIGHTS_ALL 0x1f6fu /* every right a process can hold (not RIGHT_KERNEL) */
/* What the shell gives a program it runs, unless told otherwise. */
#define RIGHTS_USER (RIGHT_FILE | RIGHT_PAGER | RIGHT_STATISTICS | RIGHT_TEST)
