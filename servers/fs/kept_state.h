/* kept_state.h: FS's state that must outlive an FS restart, in FS's kept
 * region (formica/kept_region.h). Today FS writes every change through to
 * BLK, so the only thing kept is how often FS started; the open-file table
 * (handles) goes into `state` and is restored from it, changing
 * FS_KEPT_VERSION whenever its layout changes (docs/recovery.md). */
#pragma once
#include <formica/kept_region.h>
#include <stdbool.h>
#include <stdint.h>

#define FS_KEPT_BYTES (256u * 1024)
#define FS_KEPT_MAGIC 0x3154504b45545346ull /* "FSTEKPT1" */
#define FS_KEPT_VERSION 2u                  /* 2: the open-file table in state */

struct fs_kept_state {
    struct kept_header header;
    uint8_t state[FS_KEPT_BYTES - sizeof(struct kept_header)]; /* FS's own layout */
};

/* Maps FS's kept region: *restored when a previous FS left valid state
 * (a restart). NULL when FS has none (an FS the shell started, say): FS
 * then runs without kept state. */
struct fs_kept_state *fs_kept_state_open(bool *restored);
