/* disk_client.h: BLK's side of DK: synchronous DK_READ / DK_WRITE / DK_FLUSH requests
 * with a data ICA BLK owns, offered to the cache as its cache_disk. */
#pragma once
#include "cache.h"

/* Finds DK, asks its size and prepares the ICAs; 0 or an error (no DK, no disk). */
int disk_client_open(struct cache_disk *disk);
/* The disk's size in bytes (its last block may be partial: disk->blocks counts it). */
uint64_t disk_client_bytes(void);
#define DISK_SERIAL_BYTES 20
/* The disk's serial from DK_INFO (DISK_SERIAL_BYTES, zeros when the device gives none). */
const uint8_t *disk_client_serial(void);
