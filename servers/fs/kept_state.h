/* kept_state.h: FS's state that must outlive an FS restart, in FS's kept
 * region (formica/kept_region.h): the open-file table (handles), the kept
 * answers and the copy of the running transaction (kept_transaction.h).
 * FS_KEPT_VERSION changes whenever this layout changes (docs/recovery.md). */
#pragma once
#include "kept_transaction.h"
#include "open_files.h"
#include <formica/kept_region.h>
#include <stdbool.h>
#include <stdint.h>

#define FS_KEPT_BYTES (3u << 20)
#define FS_KEPT_MAGIC 0x3154504b45545346ull /* "FSTEKPT1" */
#define FS_KEPT_VERSION 4u                  /* 4: each handle's account */

/* The start of the region (FS_KEPT_BYTES in all). */
struct fs_kept_state {
    struct kept_header header;
    struct open_files open_files;
    struct fs_kept fs;
};
_Static_assert(sizeof(struct fs_kept_state) <= FS_KEPT_BYTES, "FS's kept state fits");

/* Maps FS's kept region: *restored when a previous FS left valid state
 * (a restart). NULL when FS has none (an FS the shell started, say): FS
 * then runs without kept state. */
struct fs_kept_state *fs_kept_state_open(bool *restored);
