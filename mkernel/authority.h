/* authority.h: the m-kernel's checks of rights and quotas at spawn, at every
 * memory grant and at server registration (docs/authority.md). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "process.h"

/* 0 when `parent` (NULL: the kernel itself) may spawn what `request` asks:
 * rights within its own, the priority ceiling, a new account, the account's
 * process quota; else -E_PERMISSION, -E_QUOTA or -E_INVALID. */
long authority_check_spawn(const struct spawn_request *request, const struct process *parent);
/* Gives the new process its rights, its account and the account's limits. */
void authority_start(struct process *child, const struct spawn_request *request,
                     const struct process *parent);
/* True when `process`'s account may map `bytes` more (ICAs included). */
bool authority_memory_allows(const struct process *process, uint64_t bytes);
/* 0 when `process` may register `name`; -E_PERMISSION for a reserved name
 * (fs, blk, dk, pager) without RIGHT_RESERVED_NAME. */
long authority_check_name(const struct process *process, const char *name);
