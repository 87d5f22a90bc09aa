/* client_share.c: the per-account share of the pager's client slots and
 * backends (client_share.h): a quarter of the slots per account, a quarter
 * kept for init's; three quarters of a backend per account. */
#include "client_share.h"
#include <formica/errors.h>

long client_share_allows(const uint32_t *accounts, uint32_t used, uint32_t slots, uint32_t account)
{
    if (used >= slots)
        return -E_BUSY;
    if (account == CLIENT_SHARE_RESERVE_ACCOUNT)
        return 0;
    uint32_t own = 0, clients = 0;
    for (uint32_t i = 0; i < used; i++) {
        own += accounts[i] == account;
        clients += accounts[i] != CLIENT_SHARE_RESERVE_ACCOUNT;
    }
    uint32_t share = slots / 4 > 0 ? slots / 4 : 1, reserve = slots / 4;
    if (own >= share || clients >= slots - reserve)
        return -E_QUOTA;
    return 0;
}

long client_share_backend(uint64_t held, uint64_t asked, uint64_t total, uint32_t account)
{
    if (account == CLIENT_SHARE_RESERVE_ACCOUNT)
        return 0;
    uint64_t share = total / 4 * 3;
    return held <= share && asked <= share - held ? 0 : -E_QUOTA;
}
