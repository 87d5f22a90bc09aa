/* client_share.h: how the pager's client slots and backends are shared
 * between quota accounts: an account may hold at most a quarter of the
 * slots, and the client accounts together leave a quarter in reserve that
 * only init's account (init, the servers and the shell) may take; an
 * account's regions may claim at most three quarters of a backend. Pure:
 * host-tested. */
#pragma once
#include <stdint.h>

#define CLIENT_SHARE_RESERVE_ACCOUNT 1u /* init's account (init's pid) */

/* 0 when `account` may take one more of `slots` slots, given the accounts of
 * the `used` slots taken now; -E_QUOTA when the account holds its quarter or
 * only the reserve is left; -E_BUSY when every slot is taken. */
long client_share_allows(const uint32_t *accounts, uint32_t used, uint32_t slots, uint32_t account);
/* 0 when `account`, whose other regions on a backend of `total` bytes claim
 * `held` bytes, may claim `asked` more; -E_QUOTA past three quarters. */
long client_share_backend(uint64_t held, uint64_t asked, uint64_t total, uint32_t account);
