/* published_region.h: a server's published region (SYS_PUBLISHED_REGION):
 * memory the m-kernel keeps per server name, writable by the name's
 * instance 0 and read-only for its other instances (docs/design.md
 * "Server instances"; FS's operation log, servers/fs/operation_log.h). */
#pragma once
#include <stdint.h>

#define PUBLISHED_REGION_BASE 0x0000540000000000ull /* where it is mapped */
#define PUBLISHED_REGION_MAX_BYTES (8ull << 20)
#define PUBLISHED_REGIONS 8     /* names the m-kernel keeps a region for */
#define PUBLISHED_NAME_BYTES 16 /* = SERVER_NAME_BYTES */

/* The call itself is system_call_published_region(name, bytes)
 * (protocol/syscalls.messages, message published_region). */
