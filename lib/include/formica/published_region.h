/* published_region.h: a server's published region (SYS_PUBLISHED_REGION):
 * memory the m-kernel keeps per server name, writable by the name's
 * instance 0 and read-only for its other instances (docs/design.md
 * "Server instances"; FS's operation log, servers/fs/operation_log.h).
 * Each holder's account pays for its mapping, within the account's memory
 * limit, and an account may make only its share of the slots. */
#pragma once
#include <stdint.h>

#define PUBLISHED_REGION_BASE 0x0000540000000000ull /* where it is mapped */
#define PUBLISHED_REGION_MAX_BYTES (8ull << 20)
#define PUBLISHED_REGIONS 8     /* names the m-kernel keeps a region for */
#define PUBLISHED_NAME_BYTES 16 /* = SERVER_NAME_BYTES */
/* Shares of the region slots (docs/authority.md): the regions one account
 * other than init's may have made, and all such accounts together; the rest
 * stay for init's account (the servers init starts, FS's operation log). */
#define PUBLISHED_ACCOUNT_REGIONS (PUBLISHED_REGIONS / 4)
#define PUBLISHED_CLIENT_REGIONS (PUBLISHED_REGIONS - PUBLISHED_REGIONS / 4)

/* The call itself is system_call_published_region(name, bytes)
 * (protocol/syscalls.messages, message published_region). */
