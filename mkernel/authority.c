/* authority.c: who may create what. A child's rights are at most its
 * parent's; server priority, a new quota account and reserved server names
 * need their rights; an account's processes and memory (ICAs and mapping
 * lends included, kernel/account_memory.c) are bounded. Runs on the
 * m-kernel's core only, like every slot change. */
#include "authority.h"
#include "account_memory.h"
#include "clock.h"
#include "console.h"
#include "physical_memory.h"
#include "x86.h"
#include "shared.h"
#include <formica/errors.h>
#include <formica/protocol/servers.h>
#include <formica/ica.h>
#include <formica/log_limit.h>
#include <formica/rights.h>
#include <string.h>

/* The names protocol/NAME.messages declares reserved (formica/protocol/servers.h). */
static const char *const reserved_names[RESERVED_SERVER_COUNT] = {RESERVED_SERVER_NAMES};

/* Half of the memory free when the account starts (not of the highest
 * usable address, which a hole below 4 GiB puts far above the RAM there is). */
static uint64_t default_memory_limit(void)
{
    return physical_free_bytes() / 2;
}

/* The rights the child asks for, or the parent's own. */
static uint32_t asked_rights(const struct spawn_request *request, const struct process *parent)
{
    if (parent == NULL)
        return request->rights != 0 ? request->rights : RIGHTS_ALL; /* the kernel spawns init */
    return request->rights != 0 ? request->rights : parent->rights;
}

static uint32_t account_size(uint32_t account)
{
    uint32_t count = 0;
    for (uint32_t slot = 0; slot < PROCESS_SLOTS; slot++) {
        const struct process *process = &kernel_shared->processes[slot];
        count += process->state != PROCESS_FREE && process->account == account;
    }
    return count;
}

long authority_check_spawn(const struct spawn_request *request, const struct process *parent)
{
    uint32_t rights = asked_rights(request, parent);
    uint32_t held = parent == NULL ? RIGHTS_ALL : parent->rights;
    if (rights & ~RIGHTS_ALL)
        return -E_INVALID;
    if (rights & ~held)
        return -E_PERMISSION; /* never more than the parent holds */
    if (request->priority == PRIORITY_SERVER && !(held & RIGHT_SERVER_PRIORITY))
        return -E_PERMISSION; /* the priority ceiling */
    if ((request->flags & (SPAWN_NEW_ACCOUNT | SPAWN_SET_USER)) && !(held & RIGHT_NEW_ACCOUNT))
        return -E_PERMISSION; /* only an administrator starts accounts and names users */
    if ((request->flags & SPAWN_NEW_ACCOUNT) && parent != NULL &&
        (request->process_limit > parent->process_limit ||
         request->memory_limit > parent->memory_limit))
        return -E_PERMISSION; /* an account never gets more than its founder's */
    if (parent != NULL && !(request->flags & SPAWN_NEW_ACCOUNT) &&
        account_size(parent->account) >= parent->process_limit)
        return -E_QUOTA;
    return 0;
}

/* The child's user: the one the request names (SPAWN_SET_USER), else its
 * parent's; init is user 0. */
static void give_user(struct process *child, const struct spawn_request *request,
                      const struct process *parent)
{
    bool named = parent == NULL || (request->flags & SPAWN_SET_USER);
    child->uid = named ? request->uid : parent->uid;
    child->gid = named ? request->gid : parent->gid;
}

void authority_start(struct process *child, const struct spawn_request *request,
                     const struct process *parent)
{
    child->rights = asked_rights(request, parent);
    give_user(child, request, parent);
    if (parent != NULL && !(request->flags & SPAWN_NEW_ACCOUNT)) {
        child->account = parent->account;
        child->process_limit = parent->process_limit;
        child->memory_limit = parent->memory_limit;
        return;
    }
    child->account = child->pid;
    if (parent == NULL) { /* init: the whole machine */
        child->process_limit = PROCESS_SLOTS;
        child->memory_limit = UINT64_MAX;
        return;
    }
    child->process_limit =
        request->process_limit != 0 ? request->process_limit : ACCOUNT_DEFAULT_PROCESSES;
    child->memory_limit =
        request->memory_limit != 0 ? request->memory_limit : default_memory_limit();
}

bool authority_memory_allows(const struct process *process, uint64_t bytes)
{
    uint64_t used = process->memory_limit != UINT64_MAX /* no room granted twice */
                        ? account_memory_used_revoking(process->account)
                        : account_memory_used(process->account);
    return bytes <= process->memory_limit && used <= process->memory_limit - bytes;
}

uint64_t authority_memory_left(const struct process *process)
{
    return account_memory_left(process);
}

long authority_check_name(const struct process *process, const char *name)
{
    for (uint32_t i = 0; i < sizeof(reserved_names) / sizeof(reserved_names[0]); i++)
        if (strcmp(name, reserved_names[i]) == 0 && !(process->rights & RIGHT_RESERVED_NAME))
            return -E_PERMISSION;
    return 0;
}

/* ".i" with 0 < i < SERVER_INSTANCES_MAX in decimal, no leading zero. */
static bool is_instance_suffix(const char *suffix)
{
    if (suffix[0] != '.' || suffix[1] < '1' || suffix[1] > '9')
        return false;
    uint32_t index = 0;
    for (const char *digit = suffix + 1; *digit != '\0'; digit++) {
        if (*digit < '0' || *digit > '9')
            return false;
        index = index * 10 + (uint32_t)(*digit - '0');
        if (index >= SERVER_INSTANCES_MAX)
            return false;
    }
    return true;
}

long authority_check_kept_name(const struct process *process, const char *name)
{
    size_t length = strlen(process->name);
    if (length == 0 || strncmp(name, process->name, length) != 0)
        return -E_PERMISSION;
    return name[length] == '\0' || is_instance_suffix(name + length) ? 0 : -E_PERMISSION;
}

/* ICAs of `kind` `process` allocated and still counts. */
static uint32_t icas_of_kind(const struct process *process, uint32_t kind)
{
    if (kind == ICA_KIND_BLOCK)
        return process->blocks_allocated;
    if (kind == ICA_KIND_CONTROL)
        return process->controls_allocated;
    return process->icas_allocated - process->controls_allocated;
}

static uint32_t pool_slots(uint32_t kind)
{
    if (kind == ICA_KIND_BLOCK)
        return ICA_BLOCK_SLOTS;
    return kind == ICA_KIND_CONTROL ? ICA_CONTROL_SLOTS : ICA_DATA_SLOTS;
}

static const char *pool_name(uint32_t kind)
{
    if (kind == ICA_KIND_BLOCK)
        return "block";
    return kind == ICA_KIND_CONTROL ? "control" : "data";
}

/* The refusal, logged at most LOG_LIMIT_PER_SECOND times a second per account. */
static long ica_quota_refused(const struct process *process, uint32_t kind, uint32_t held)
{
    static struct log_limit limit; /* the m-kernel's core only */
    uint64_t held_back = 0;
    if (log_limit_allow(&limit, process->account, clock_cycles_to_us(rdtsc()), &held_back))
        kprintf("ica: account %u (pid %u) holds %u %s ICAs: refused (its share %u, reserve %u)"
                " (%lu more not shown)\n",
                process->account, process->pid, held, pool_name(kind),
                pool_slots(kind) / ICA_ACCOUNT_SHARE_DIVISOR,
                pool_slots(kind) / ICA_RESERVE_DIVISOR, held_back);
    return -E_QUOTA;
}

long authority_ica_allows(const struct process *process, uint32_t kind)
{
    if (process->account == INIT_PID)
        return 0; /* init's account may use the reserve */
    uint32_t account = 0, clients = 0;
    for (uint32_t slot = 0; slot < PROCESS_SLOTS; slot++) {
        const struct process *member = &kernel_shared->processes[slot];
        if (member->state == PROCESS_FREE || member->account == INIT_PID)
            continue;
        uint32_t held = icas_of_kind(member, kind);
        clients += held;
        if (member->account == process->account)
            account += held;
    }
    uint32_t slots = pool_slots(kind);
    if (account >= slots / ICA_ACCOUNT_SHARE_DIVISOR)
        return ica_quota_refused(process, kind, account);
    if (account >= ICA_ACCOUNT_FLOOR && clients >= slots - slots / ICA_RESERVE_DIVISOR)
        return ica_quota_refused(process, kind, account);
    return 0;
}
