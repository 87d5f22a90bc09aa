/* block_client.h: FS's way to BLK: an ext2_device whose blocks are read and
 * written with synchronous BLK_READ / BLK_WRITE requests, and BLK_SYNC. */
#pragma once
#include "ext2.h"

/* Finds BLK and prepares FS's own control and data ICAs; 0 or an error. */
int block_client_open(struct ext2_device *device, long *blk_pid);
/* Bytes written into disk block `disk_block` by BLK itself (BLK_PATCH):
 * FS's recent copy of that block, if it keeps one, gets them too. */
void block_client_note_patch(uint64_t disk_block, uint32_t offset, const void *bytes,
                             uint32_t length);
/* Drops FS's recent copy of `disk_block`, if it keeps one. */
void block_client_forget(uint64_t disk_block);
/* Every dirty block in BLK to the disk; 0 or an error. */
long block_client_sync(void);
/* The BLK that replaced `gone` (a restart), waited for; also used by the
 * readblock forward. < 0 if BLK does not come back. */
long block_client_reconnect(long gone);
