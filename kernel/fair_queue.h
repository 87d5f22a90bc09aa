/* fair_queue.h: the application level of a core's run queue, fair between
 * quota accounts. The next application to run is the oldest ready process of
 * the account that has used the least of this core (TSC cycles charged to
 * it); an account that comes back after waiting starts at most `credit`
 * cycles below the least-used account still competing, so a program that
 * mostly waits runs as soon as it is ready and none can bank time by
 * sleeping. Pure logic, tested on the host. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define FAIR_QUEUE_SLOTS 256   /* = PROCESS_SLOTS: every process fits */
#define FAIR_QUEUE_ACCOUNTS 64 /* accounts remembered per core; the last entry is the crowd's */
#define FAIR_QUEUE_EMPTY UINT32_MAX
/* The entry every further account shares when the other entries all hold
 * accounts with ready processes (more than 63 accounts ready on one core). */
#define FAIR_QUEUE_CROWD (FAIR_QUEUE_ACCOUNTS - 1)
#define FAIR_QUEUE_CROWD_ACCOUNT UINT32_MAX
#define FAIR_QUEUE_WEIGHT_ONE 1000u /* an ordinary process's weight (= SHARE_WEIGHT_ONE) */

struct account_usage {
    uint32_t account; /* 0: an unused entry */
    uint32_t ready;   /* its processes in the queue */
    uint64_t used;    /* cycles of this core charged to it, from where it was placed */
};

struct fair_queue {
    uint32_t count;  /* processes waiting */
    uint64_t credit; /* how far below the least-used competitor a returning account starts */
    struct {
        uint32_t slot;           /* the process's slot in the process table */
        uint32_t entry;          /* its account's index in `accounts` */
    } waiting[FAIR_QUEUE_SLOTS]; /* oldest first */
    struct account_usage accounts[FAIR_QUEUE_ACCOUNTS];
};

void fair_queue_init(struct fair_queue *queue, uint64_t credit);
/* Appends process `slot` of `account` (not 0); `running` is the account
 * whose application has the core now (0: none), which competes too. False,
 * and nothing changes, when the queue is full or the account is 0. */
bool fair_queue_push(struct fair_queue *queue, uint32_t slot, uint32_t account, uint32_t running);
/* Removes and returns the oldest process of the least-used account with a
 * ready process, or FAIR_QUEUE_EMPTY. */
uint32_t fair_queue_pop(struct fair_queue *queue);
/* Adds `cycles` to what `account` has used of this core. */
void fair_queue_charge(struct fair_queue *queue, uint32_t account, uint64_t cycles);
/* The same, only if the queue remembers `account` (it has or had
 * applications on this core): a server's work for a client elsewhere
 * takes no entry. */
void fair_queue_charge_known(struct fair_queue *queue, uint32_t account, uint64_t cycles);
/* Whether another account's ready process has used at least `margin`
 * cycles less than `running` (the account that has the core): then the
 * running application should give the core up. */
bool fair_queue_owes_another(const struct fair_queue *queue, uint32_t running, uint64_t margin);
/* The cycles a process of weight `weight` (SYS_SHARE_WEIGHT, thousandths;
 * 0 = 1000, ordinary) is charged for `cycles`: cycles * 1000 / weight, so
 * against an ordinary account it gets weight / (weight + 1000) of a core. */
uint64_t fair_queue_weighed(uint64_t cycles, uint32_t weight);
/* What `account` has used of this core as the queue counts it (0 when not remembered). */
uint64_t fair_queue_used(const struct fair_queue *queue, uint32_t account);
