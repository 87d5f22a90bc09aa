/* open_files_mirror.h: FS's owner's open-file table mirrored in its
 * published region, so that its replicas serve reads on its handles
 * (docs/storage.md, "FS replicas"): the owner copies each slot it changes
 * in an order that lets a replica, reading while the owner writes, take a
 * slot only as a whole. Freestanding, host-tested. */
#pragma once
#include "open_files.h"
#include <stdbool.h>
#include <stdint.h>

/* Slot `slot` of `table` copied into `mirror` (and the count in use). */
void open_files_mirror_slot(struct open_files *mirror, const struct open_files *table,
                            uint32_t slot);
/* The whole table copied (an owner's start). */
void open_files_mirror_all(struct open_files *mirror, const struct open_files *table);
/* A replica's look at the mirror: true, with *out a whole copy of the slot,
 * when `handle` names an open file of `owner`; false (as open_files_find's
 * NULL) when it does not, or when the owner changed the slot meanwhile. */
bool open_files_mirror_find(const struct open_files *mirror, uint32_t owner, uint64_t handle,
                            struct open_file *out);
