/* local_memory.h: where memstream's arrays live (local_memory.c): the node's
 * DRAM (its heap) or its local NVDIMM, the one whose role in the boot option
 * nvm=ROLE,... is "local", never the memory-node store's. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define LOCAL_NVM_ROLE "local"

enum local_kind { LOCAL_DRAM, LOCAL_NVM };

/* `bytes` of memory of that kind, or NULL after a `memstream: ...` line (no such NVDIMM, one
 * smaller than asked, one that overlaps the store's, a heap that cannot grow). */
void *local_memory_take(enum local_kind kind, uint64_t bytes);
const char *local_kind_name(enum local_kind kind);
bool local_kind_parse(const char *text, enum local_kind *kind);
