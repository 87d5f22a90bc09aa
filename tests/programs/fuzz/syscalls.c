/* syscalls.c: raw system calls with arguments from the pools: every call of
 * protocol/syscalls.messages and numbers that name none. Calls that would
 * end or stall the fuzzer itself (exit, a console read that waits, a long
 * sleep, an await with nothing to take) get only arguments that return. */
#include "fuzz.h"
#include <formica/ica.h>
#include <formica/pager.h>
#include <formica/request.h>
#include <formica/syscalls.h>
#include <formica/user.h>
#include <string.h>

#define CALL(number, a, b, c, d, e, f)                                                             \
    syscall6(number, (long)(a), (long)(b), (long)(c), (long)(d), (long)(e), (long)(f))

/* A call that writes `bytes` to `address` of class `class` must not succeed
 * unless the memory is writable. */
static void check_write(struct fuzz *fuzz, const char *name, long result, enum pointer_class class,
                        uint64_t bytes)
{
    if (result >= 0 && bytes > 0 && class != POINTER_WRITABLE)
        fuzz_anomaly(fuzz, name, result, "wrote into memory the caller may not write");
}

/* A call that fills a structure of `bytes` at a pointer of any class. */
static void output_call(struct fuzz *fuzz, const char *name, long number, uint64_t bytes)
{
    enum pointer_class class = pick_class(fuzz);
    uint64_t pointer = pick_pointer(fuzz, class, bytes);
    long result = fuzz_result(fuzz, name, CALL(number, pointer, 0, 0, 0, 0, 0), pointer, 0, 0);
    check_write(fuzz, name, result, class, bytes);
}

/* process_list / core_list: a buffer of any class and a count. */
static void list_call(struct fuzz *fuzz, const char *name, long number, uint64_t entry_bytes)
{
    enum pointer_class class = pick_class(fuzz);
    uint64_t max = random_chance(fuzz, 50) ? random_below(fuzz, 4) : pick_size(fuzz);
    uint64_t bytes = max < 1024 ? max * entry_bytes : FUZZ_SCRATCH_BYTES;
    uint64_t pointer = pick_pointer(fuzz, class, bytes);
    long result = fuzz_result(fuzz, name, CALL(number, pointer, max, 0, 0, 0, 0), pointer, max, 0);
    check_write(fuzz, name, result, class, result > 0 ? (uint64_t)result : 0);
}

/* Console calls with nothing readable to print and nothing that waits. */
static void console_call(struct fuzz *fuzz)
{
    enum pointer_class class = random_chance(fuzz, 50) ? POINTER_FORBIDDEN : POINTER_READ_ONLY;
    uint64_t pointer = pick_pointer(fuzz, class, 0), length = pick_size(fuzz);
    if (random_chance(fuzz, 50)) {
        if (class == POINTER_READ_ONLY && length > 0 && length <= (1u << 20))
            pointer = pick_pointer(fuzz, POINTER_FORBIDDEN, 0); /* nothing printed */
        fuzz_result(fuzz, "console_write", CALL(SYS_CONSOLE_WRITE, pointer, length, 0, 0, 0, 0),
                    pointer, length, 0);
        return;
    }
    if (length == 0)
        length = 1; /* length 0 returns at once; others must fail before waiting */
    long result =
        fuzz_result(fuzz, "console_read", CALL(SYS_CONSOLE_READ, pointer, length, 0, 0, 0, 0),
                    pointer, length, 0);
    check_write(fuzz, "console_read", result, class, length);
}

static void string_call(struct fuzz *fuzz, const char *name, long number)
{
    static const char *const names[] = {"fs",  "blk", "dk",        "pager",
                                        "cmd", "",    "fuzz-none", "selftest"};
    uint64_t text = random_chance(fuzz, 60) ? (uint64_t)names[random_below(fuzz, 8)]
                                            : pick_pointer(fuzz, pick_class(fuzz), 0);
    if (text == (uint64_t)scratch() && random_chance(fuzz, 50))
        memset(scratch(), 'x', FUZZ_SCRATCH_BYTES); /* no terminating NUL at all */
    enum pointer_class class = pick_class(fuzz);
    uint64_t size = random_chance(fuzz, 50) ? random_below(fuzz, 80) : pick_size(fuzz);
    uint64_t buffer = pick_pointer(fuzz, class, size);
    long result =
        fuzz_result(fuzz, name, CALL(number, text, buffer, size, 0, 0, 0), text, buffer, size);
    if (number == SYS_KERNEL_OPTION)
        check_write(fuzz, name, result, class, (uint64_t)(result + 1));
}

static void spawn_call(struct fuzz *fuzz)
{
    static const char *const programs[] = {"hello", "spin", "nonexistent", "", "fuzz", "init"};
    struct spawn_request *request = (struct spawn_request *)scratch();
    random_fill(fuzz, request, sizeof *request);
    if (random_chance(fuzz, 70)) {
        strncpy(request->program, programs[random_below(fuzz, 6)], NAME_BYTES);
        strncpy(request->arguments, "1", ARGUMENTS_BYTES);
    }
    if (random_chance(fuzz, 50)) {
        request->core = random_chance(fuzz, 50) ? CORE_ANY : (uint32_t)random_below(fuzz, 4);
        request->priority = (uint32_t)random_below(fuzz, 3);
        request->flags = (uint32_t)random_below(fuzz, 9);
        request->rights = random_chance(fuzz, 50) ? 0 : (uint32_t)random_next(fuzz);
    }
    uint64_t pointer = random_chance(fuzz, 80) ? (uint64_t)request : pick_pointer(fuzz, 2, 0);
    long pid = fuzz_result(fuzz, "spawn", CALL(SYS_SPAWN, pointer, 0, 0, 0, 0, 0), pointer, 0, 0);
    if (pid > 0) { /* a forged request that was accepted: end it at once */
        kill_process(pid);
        wait_process(pid, NULL);
    }
}

static void wait_call(struct fuzz *fuzz)
{
    long pid = pick_pid(fuzz);
    for (uint32_t i = 0; i < fuzz->child_count; i++)
        if (fuzz->children[i] == pid)
            return; /* own children are waited for by children.c, after a kill */
    enum pointer_class class = pick_class(fuzz);
    uint64_t code = random_chance(fuzz, 30) ? 0 : pick_pointer(fuzz, class, 4);
    fuzz_result(fuzz, "wait", CALL(SYS_WAIT, pid, code, 0, 0, 0, 0), (uint64_t)pid, code, 0);
}

static void kill_call(struct fuzz *fuzz)
{
    long pid = pick_pid(fuzz);
    if (pid == fuzz->self)
        return;
    for (uint32_t i = 0; i < fuzz->child_count; i++)
        if (fuzz->children[i] == pid)
            return; /* children.c kills and waits for its own */
    long result =
        fuzz_result(fuzz, "kill", CALL(SYS_KILL, pid, 0, 0, 0, 0, 0), (uint64_t)pid, 0, 0);
    if (result == 0 && (pid == fuzz->parent || pid == 1 || pid == fuzz->servers[0]))
        fuzz_anomaly(fuzz, "kill", result, "killed a process it does not own");
}

static void notify_call(struct fuzz *fuzz)
{
    long pid = random_chance(fuzz, 50) ? fuzz->self : pick_pid(fuzz);
    fuzz_result(fuzz, "notify", CALL(SYS_NOTIFY, pid, 0, 0, 0, 0, 0), (uint64_t)pid, 0, 0);
    if (pid == fuzz->self) /* something to take: await returns */
        fuzz_result(fuzz, "await", CALL(SYS_AWAIT, 0, 0, 0, 0, 0, 0), 0, 0, 0);
}

static void memory_call(struct fuzz *fuzz)
{
    uint64_t bytes = random_chance(fuzz, 70) ? pick_size(fuzz) : random_below(fuzz, 3) * 4096;
    if (bytes > 0 && bytes <= (1u << 20) && random_chance(fuzz, 80))
        bytes |= 1ull << 60; /* small growth only rarely: the heap never shrinks */
    fuzz_result(fuzz, "memory_grow", CALL(SYS_MEMORY_GROW, bytes, 0, 0, 0, 0, 0), bytes, 0, 0);
}

/* Device and pager-service calls: an ordinary program holds neither right. */
static void privileged_call(struct fuzz *fuzz)
{
    static const long numbers[] = {SYS_PCI_CONFIG_READ, SYS_PCI_CONFIG_WRITE, SYS_DEVICE_MAP,
                                   SYS_DMA_ALLOCATE,    SYS_IRQ_ATTACH,       SYS_IRQ_ATTACH_MSI,
                                   SYS_PAGER_MAP,       SYS_PAGER_UNMAP,      SYS_PAGER_SCAN,
                                   SYS_POWER_OFF};
    long number = numbers[random_below(fuzz, sizeof numbers / sizeof numbers[0])];
    uint64_t a = random_chance(fuzz, 50) ? (uint64_t)pick_pid(fuzz) : pick_size(fuzz);
    uint64_t b = random_chance(fuzz, 50) ? PAGER_REGION_BASE : pick_size(fuzz);
    uint64_t c = pick_size(fuzz), d = pick_pointer(fuzz, pick_class(fuzz), 16);
    long result =
        fuzz_result(fuzz, "privileged", CALL(number, a, b, c, d, pick_size(fuzz), 0), a, b, c);
    if (result >= 0 && number != SYS_PAGER_SCAN && number != SYS_PAGER_UNMAP)
        fuzz_anomaly(fuzz, "privileged", result, "a driver or pager call succeeded");
    if (random_chance(fuzz, 10))
        fuzz_result(fuzz, "irq_wait", CALL(SYS_IRQ_WAIT, 1, 0, 0, 0, 0, 0), 1, 0, 0);
}

static void pager_call(struct fuzz *fuzz)
{
    if (random_chance(fuzz, 40)) {
        fuzz_result(fuzz, "pager_release", CALL(SYS_PAGER_RELEASE, 0, 0, 0, 0, 0, 0), 0, 0, 0);
        return;
    }
    long pager = random_chance(fuzz, 70) ? fuzz->servers[3] : pick_pid(fuzz);
    uint64_t bytes =
        random_chance(fuzz, 50) ? (1 + random_below(fuzz, 64)) * 4096 : pick_size(fuzz);
    fuzz_result(fuzz, "pager_region", CALL(SYS_PAGER_REGION, pager, bytes, 0, 0, 0, 0),
                (uint64_t)pager, bytes, 0);
}

static void copy_call(struct fuzz *fuzz)
{
    if (random_chance(fuzz, 40)) {
        uint64_t bytes = random_chance(fuzz, 50) ? random_below(fuzz, 8192) : pick_size(fuzz);
        enum pointer_class class = pick_class(fuzz);
        uint64_t address = pick_pointer(fuzz, class, bytes);
        if (class ==
            POINTER_WRITABLE) /* the window must not reach past scratch: copy_to fills it */
            bytes = clamp_to_scratch(address, bytes);
        long result =
            fuzz_result(fuzz, "copy_grant", CALL(SYS_COPY_GRANT, address, bytes, 0, 0, 0, 0),
                        address, bytes, 0);
        check_write(fuzz, "copy_grant", result, class, bytes);
        return;
    }
    long pid = random_chance(fuzz, 50) ? fuzz->self : pick_pid(fuzz);
    uint64_t offset = random_chance(fuzz, 50) ? random_below(fuzz, 8192) : pick_size(fuzz);
    uint64_t bytes = random_chance(fuzz, 50) ? random_below(fuzz, 8192) : pick_size(fuzz);
    uint64_t source = pick_pointer(fuzz, pick_class(fuzz), bytes);
    fuzz_result(fuzz, "copy_to", CALL(SYS_COPY_TO, pid, offset, source, bytes, 0, 0), (uint64_t)pid,
                offset, bytes);
}

static void ica_call(struct fuzz *fuzz)
{
    switch (random_below(fuzz, 5)) {
    case 0: {
        uint64_t id = pick_ica_id(fuzz);
        fuzz_result(fuzz, "ica_lend_count", CALL(SYS_ICA_LEND_COUNT, id, 0, 0, 0, 0, 0), id, 0, 0);
        return;
    }
    case 1: {
        uint32_t flags = (uint32_t)random_next(fuzz) | ICA_NO_WAIT;
        flags &= ~ICA_TIMEOUT;
        long id = fuzz_result(fuzz, "ica_receive", CALL(SYS_ICA_RECEIVE, flags, 0, 0, 0, 0, 0),
                              flags, 0, 0);
        if (id > 0) { /* a request to us (we registered a name) or a result */
            ica_keep(fuzz, (uint64_t)id);
            if (ica_control_of((uint64_t)id)->arrival == ICA_ARRIVED_AS_RESULT) {
                fuzz->outstanding -= fuzz->outstanding > 0;
                return;
            }
            if (random_chance(fuzz, 50) &&
                fuzz_result(fuzz, "ica_return", CALL(SYS_ICA_RETURN, id, 0, 0, 0, 0, 0),
                            (uint64_t)id, 0, 0) == 0)
                ica_forget(fuzz, (uint64_t)id);
        }
        return;
    }
    case 2: {
        long id = fuzz_result(fuzz, "ica_collect",
                              CALL(SYS_ICA_COLLECT, ICA_NO_WAIT, 0, 0, 0, 0, 0), 0, 0, 0);
        if (id > 0) {
            ica_keep(fuzz, (uint64_t)id);
            if (fuzz->outstanding > 0)
                fuzz->outstanding--;
        }
        return;
    }
    case 3: {
        uint64_t id = pick_ica_id(fuzz);
        long result =
            fuzz_result(fuzz, "ica_return", CALL(SYS_ICA_RETURN, id, 0, 0, 0, 0, 0), id, 0, 0);
        if (result == 0)
            ica_forget(fuzz, id);
        return;
    }
    default: {
        uint64_t ms = random_below(fuzz, 3);
        fuzz_result(fuzz, "ica_receive_timeout",
                    CALL(SYS_ICA_RECEIVE, ICA_TIMEOUT | ICA_NO_WAIT, ms, 0, 0, 0, 0), ms, 0, 0);
        return;
    }
    }
}

static void register_call(struct fuzz *fuzz)
{
    static const char *const names[] = {"fs", "blk", "dk", "pager", "fuzz-a", "fuzz-b", ""};
    uint64_t which = random_below(fuzz, 10);
    uint64_t name = which < 7 ? (uint64_t)names[which] : pick_pointer(fuzz, pick_class(fuzz), 0);
    if (random_chance(fuzz, 50)) {
        fuzz_result(fuzz, "server_lookup", CALL(SYS_SERVER_LOOKUP, name, 0, 0, 0, 0, 0), name, 0,
                    0);
        return;
    }
    long result = fuzz_result(fuzz, "server_register",
                              CALL(SYS_SERVER_REGISTER, name, 0, 0, 0, 0, 0), name, 0, 0);
    fuzz->registered |= result == 0;
    if (result == 0 && which < 4)
        fuzz_anomaly(fuzz, "server_register", result, "registered a reserved server name");
}

/* Numbers that name no call, and the harmless calls. */
static void other_call(struct fuzz *fuzz)
{
    static const long numbers[] = {19, 37, 38, 39, 49, 50, 255, 256, 1l << 32, -1, -4096};
    switch (random_below(fuzz, 7)) {
    case 0: {
        long number = numbers[random_below(fuzz, sizeof numbers / sizeof numbers[0])];
        long result = fuzz_result(fuzz, "no_such_call", CALL(number, 0, 0, 0, 0, 0, 0),
                                  (uint64_t)number, 0, 0);
        if (result >= 0)
            fuzz_anomaly(fuzz, "no_such_call", result, "an unknown call number succeeded");
        return;
    }
    case 1:
        fuzz_result(fuzz, "yield", CALL(SYS_YIELD, 0, 0, 0, 0, 0, 0), 0, 0, 0);
        return;
    case 2: {
        uint64_t ms = random_below(fuzz, 3);
        fuzz_result(fuzz, "sleep", CALL(SYS_SLEEP, ms, 0, 0, 0, 0, 0), ms, 0, 0);
        return;
    }
    case 3: {
        uint32_t signature =
            random_chance(fuzz, 50) ? 0x43495041u /* APIC */ : (uint32_t)random_next(fuzz);
        enum pointer_class class = pick_class(fuzz);
        uint64_t size = random_chance(fuzz, 50) ? random_below(fuzz, 4096) : pick_size(fuzz);
        uint64_t buffer = pick_pointer(fuzz, class, size);
        long result = fuzz_result(fuzz, "firmware_table",
                                  CALL(SYS_FIRMWARE_TABLE, signature, buffer, size, 0, 0, 0),
                                  signature, buffer, size);
        check_write(fuzz, "firmware_table", result > 0 && (uint64_t)result <= size ? result : -1,
                    class, size);
        return;
    }
    case 4:
        fuzz_result(fuzz, "process_id", CALL(SYS_PROCESS_ID, 0, 0, 0, 0, 0, 0), 0, 0, 0);
        return;
    case 5:
        output_call(fuzz, "memory_report", SYS_MEMORY_REPORT, sizeof(struct memory_report));
        return;
    default:
        fuzz_result(fuzz, "core_id", CALL(SYS_CORE_ID, 0, 0, 0, 0, 0, 0), 0, 0, 0);
        return;
    }
}

void fuzz_system_call(struct fuzz *fuzz)
{
    switch (random_below(fuzz, 20)) {
    case 0:
        console_call(fuzz);
        return;
    case 1:
        list_call(fuzz, "process_list", SYS_PROCESS_LIST, sizeof(struct process_info));
        return;
    case 2:
        list_call(fuzz, "core_list", SYS_CORE_LIST, sizeof(struct core_info));
        return;
    case 3:
        output_call(fuzz, "placement", SYS_PLACEMENT, sizeof(struct placement_info));
        return;
    case 4:
        output_call(fuzz, "clock", SYS_CLOCK, sizeof(struct clock_info));
        return;
    case 5:
        output_call(fuzz, "ica_stats", SYS_ICA_STATS, sizeof(struct ica_stats));
        return;
    case 6:
        string_call(fuzz, "kernel_option", SYS_KERNEL_OPTION);
        return;
    case 7:
        spawn_call(fuzz);
        return;
    case 8:
        wait_call(fuzz);
        return;
    case 9:
        kill_call(fuzz);
        return;
    case 10:
        notify_call(fuzz);
        return;
    case 11:
        memory_call(fuzz);
        return;
    case 12:
        privileged_call(fuzz);
        return;
    case 13:
        pager_call(fuzz);
        return;
    case 14:
        copy_call(fuzz);
        return;
    case 15:
    case 16:
        ica_call(fuzz);
        return;
    case 17:
        register_call(fuzz);
        return;
    default:
        other_call(fuzz);
        return;
    }
}
