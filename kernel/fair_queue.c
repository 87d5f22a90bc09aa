/* fair_queue.c: the account-fair application level of fair_queue.h. Accounts
 * are remembered in a small table per core; an entry whose account has no
 * ready process may be given to another account (its history is then
 * forgotten, which costs nothing: a returning account is placed anyway). */
#include "fair_queue.h"
#include <string.h>

#define NO_ENTRY UINT32_MAX

void fair_queue_init(struct fair_queue *queue, uint64_t credit)
{
    memset(queue, 0, sizeof(*queue));
    queue->credit = credit;
}

static uint32_t entry_of(const struct fair_queue *queue, uint32_t account)
{
    for (uint32_t entry = 0; entry < FAIR_QUEUE_CROWD; entry++)
        if (queue->accounts[entry].account == account)
            return entry;
    return NO_ENTRY;
}

/* The least `used` among accounts with a ready process and `running`'s;
 * false when none competes. */
static bool least_competing_use(const struct fair_queue *queue, uint32_t running, uint64_t *least)
{
    bool found = false;
    for (uint32_t entry = 0; entry < FAIR_QUEUE_ACCOUNTS; entry++) {
        const struct account_usage *usage = &queue->accounts[entry];
        if (usage->account == 0 || (usage->ready == 0 && usage->account != running))
            continue;
        if (!found || usage->used < *least)
            *least = usage->used;
        found = true;
    }
    return found;
}

/* An account joining the competition starts no further back than `credit`
 * below the least-used competitor (where it is, if it is ahead of that). */
static void place_returning(struct fair_queue *queue, uint32_t entry, uint32_t running)
{
    uint64_t least = 0;
    if (!least_competing_use(queue, running, &least))
        return;
    uint64_t floor = least > queue->credit ? least - queue->credit : 0;
    if (queue->accounts[entry].used < floor)
        queue->accounts[entry].used = floor;
}

/* An entry for `account`: its own, a free one, one whose account has no
 * ready process (not `keep`'s), else the crowd's. */
static uint32_t entry_for(struct fair_queue *queue, uint32_t account, uint32_t keep)
{
    uint32_t entry = entry_of(queue, account);
    if (entry != NO_ENTRY)
        return entry;
    uint32_t reusable = NO_ENTRY;
    for (uint32_t candidate = 0; candidate < FAIR_QUEUE_CROWD; candidate++) {
        const struct account_usage *usage = &queue->accounts[candidate];
        if (usage->account == 0) {
            reusable = candidate;
            break;
        }
        if (reusable == NO_ENTRY && usage->ready == 0 && usage->account != keep)
            reusable = candidate;
    }
    if (reusable == NO_ENTRY) {
        queue->accounts[FAIR_QUEUE_CROWD].account = FAIR_QUEUE_CROWD_ACCOUNT;
        return FAIR_QUEUE_CROWD;
    }
    queue->accounts[reusable] = (struct account_usage){.account = account};
    return reusable;
}

bool fair_queue_push(struct fair_queue *queue, uint32_t slot, uint32_t account, uint32_t running)
{
    if (account == 0 || queue->count == FAIR_QUEUE_SLOTS)
        return false;
    uint32_t entry = entry_for(queue, account, running);
    struct account_usage *usage = &queue->accounts[entry];
    if (usage->ready == 0 && account != running)
        place_returning(queue, entry, running);
    usage->ready++;
    queue->waiting[queue->count].slot = slot;
    queue->waiting[queue->count].entry = entry;
    queue->count++;
    return true;
}

/* The entry with a ready process that has used the least (the lowest index among equals). */
static uint32_t least_used_ready(const struct fair_queue *queue)
{
    uint32_t best = NO_ENTRY;
    for (uint32_t entry = 0; entry < FAIR_QUEUE_ACCOUNTS; entry++) {
        const struct account_usage *usage = &queue->accounts[entry];
        if (usage->ready == 0)
            continue;
        if (best == NO_ENTRY || usage->used < queue->accounts[best].used)
            best = entry;
    }
    return best;
}

uint32_t fair_queue_pop(struct fair_queue *queue)
{
    uint32_t entry = least_used_ready(queue);
    if (entry == NO_ENTRY)
        return FAIR_QUEUE_EMPTY;
    uint32_t at = 0;
    while (queue->waiting[at].entry != entry) /* ready > 0: it is there */
        at++;
    uint32_t slot = queue->waiting[at].slot;
    memmove(&queue->waiting[at], &queue->waiting[at + 1],
            (queue->count - at - 1) * sizeof(queue->waiting[0]));
    queue->count--;
    queue->accounts[entry].ready--;
    return slot;
}

/* Adds `cycles` to an entry's use, stopping at the largest count rather
 * than wrapping round to look unused. */
static void add_use(struct account_usage *usage, uint64_t cycles)
{
    usage->used = usage->used + cycles < usage->used ? UINT64_MAX : usage->used + cycles;
}

void fair_queue_charge(struct fair_queue *queue, uint32_t account, uint64_t cycles)
{
    if (account == 0 || cycles == 0)
        return;
    uint32_t entry = entry_of(queue, account);
    if (entry == NO_ENTRY) {
        entry = entry_for(queue, account, account);
        if (queue->accounts[entry].ready == 0)
            place_returning(queue, entry, account);
    }
    add_use(&queue->accounts[entry], cycles);
}

void fair_queue_charge_known(struct fair_queue *queue, uint32_t account, uint64_t cycles)
{
    uint32_t entry = account == 0 ? NO_ENTRY : entry_of(queue, account);
    if (entry != NO_ENTRY)
        add_use(&queue->accounts[entry], cycles);
}

bool fair_queue_owes_another(const struct fair_queue *queue, uint32_t running, uint64_t margin)
{
    uint32_t best = least_used_ready(queue);
    uint32_t own = entry_of(queue, running);
    if (best == NO_ENTRY || own == NO_ENTRY || best == own)
        return false;
    return queue->accounts[best].used + margin < queue->accounts[own].used;
}

uint64_t fair_queue_weighed(uint64_t cycles, uint32_t weight)
{
    if (weight == 0 || weight == FAIR_QUEUE_WEIGHT_ONE)
        return cycles;
    uint64_t whole = cycles / weight, part = cycles % weight; /* no overflow for any count */
    return whole * FAIR_QUEUE_WEIGHT_ONE + part * FAIR_QUEUE_WEIGHT_ONE / weight;
}

uint64_t fair_queue_used(const struct fair_queue *queue, uint32_t account)
{
    uint32_t entry = entry_of(queue, account);
    return entry == NO_ENTRY ? 0 : queue->accounts[entry].used;
}
