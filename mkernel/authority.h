/* authority.h: the m-kernel's checks of rights and quotas at spawn, at every
 * memory grant and at server registration (docs/authority.md). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "process.h"

/* Parts of each ICA pool: one client account's most, and the reserve. */
#define ICA_ACCOUNT_SHARE_DIVISOR 4 /* an account: a quarter of a pool */
#define ICA_RESERVE_DIVISOR 8       /* init's account keeps an eighth */
/* An account's first ICAs of each pool may come from the reserve, so a new
 * program can always reach the servers, however many accounts hold their share. */
#define ICA_ACCOUNT_FLOOR 8

/* 0 when `parent` (NULL: the kernel itself) may spawn what `request` asks:
 * rights within its own, the priority ceiling, a new account, the account's
 * process quota; else -E_PERMISSION, -E_QUOTA or -E_INVALID. */
long authority_check_spawn(const struct spawn_request *request, const struct process *parent);
/* Gives the new process its rights, its account and the account's limits. */
void authority_start(struct process *child, const struct spawn_request *request,
                     const struct process *parent);
/* True when `process`'s account may map `bytes` more (ICAs and mapping
 * lends included: kernel/account_memory.h). */
bool authority_memory_allows(const struct process *process, uint64_t bytes);
/* Bytes `process`'s account may still map (UINT64_MAX: no limit). */
uint64_t authority_memory_left(const struct process *process);
/* 0 when `process`'s account may allocate one more ICA of `kind`: a client
 * account holds at most a quarter of each pool, and client accounts
 * together leave an eighth to init's account (init, the servers, the
 * shell), but for each account's first ICA_ACCOUNT_FLOOR; else -E_QUOTA,
 * with a rate-limited log line. */
long authority_ica_allows(const struct process *process, uint32_t kind);
/* 0 when `process` may register `name`; -E_PERMISSION for a reserved name
 * (fs, blk, dk, pager) without RIGHT_RESERVED_NAME. */
long authority_check_name(const struct process *process, const char *name);
/* Whether `process` may map the kept region `name`: its own program's name
 * (a server's name is its program's), alone for a lone server or instance 0,
 * or with an instance's suffix ".i" (0 < i < SERVER_INSTANCES_MAX, no
 * leading zero). 0, or -E_PERMISSION. */
long authority_check_kept_name(const struct process *process, const char *name);
