/* lend_on.c: `icatest lend`'s lend-on cases: a block ICA lent to a process
 * may be lent on by it (how FS shows BLK's cached blocks to applications).
 * A lender role holds the block (BLK's part), a middle role borrows it and
 * lends it on (FS's part) to this process; the counts, the refusals, a lend
 * back to the lender or to the middle, and the end of each lend, also after
 * the lender ended, are checked. */
#include "icatest.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LENT_BYTE 0x5b
#define LENDER_NAME "lendonA"
#define MIDDLE_NAME "lendonB"
#define PROCESS_LIST_MAX 256

/* What the lender and the middle do for an IPC_ECHO, by its value. */
enum lend_on_step {
    STEP_COUNT = 1, /* answer the block's SYS_ICA_LEND_COUNT */
    STEP_FREE,      /* the lender: answer ica_free of its block */
    STEP_BORROW,    /* the middle: borrow the block from the lender */
    STEP_READ,      /* the middle: answer the block's byte (-E_INVALID if it varies) */
    STEP_GIVE_BACK, /* the middle: end its lend (free the control ICA it came with) */
    STEP_WRITE,     /* the lender: write its block, answer its last byte */
    STEP_LEND_BACK, /* the middle: lend the block on to its lender, asking it to write it */
};

static long lender_step(uint64_t block, uint64_t step)
{
    uint8_t *bytes = ica_address(block);
    switch (step) {
    case STEP_COUNT:
        return ica_lend_count(block);
    case STEP_FREE:
        return ica_free(block);
    case STEP_WRITE:
        memset(bytes, LENT_BYTE, 4096);
        return bytes[4095];
    default:
        return -E_INVALID;
    }
}

/* The lender's and the middle's serve loop: IPC_EXIT ends it (0 once
 * answered), `answer_lend` answers an IPC_LEND, and IPC_ECHO's value is a
 * step for `step`, whose result is the answer. */
struct lend_role {
    void (*answer_lend)(void *context, uint64_t control);
    long (*step)(void *context, uint64_t step);
    void *context;
};

static int serve_lend_role(const struct lend_role *role)
{
    for (long control = ica_receive(0); control >= 0; control = ica_receive(0)) {
        struct ica_control *page = ica_control_of((uint64_t)control);
        if (page->operation == IPC_EXIT)
            return ica_return((uint64_t)control) == 0 ? 0 : 1;
        if (page->operation == IPC_LEND) {
            role->answer_lend(role->context, (uint64_t)control);
            continue;
        }
        page->result = role->step(role->context, ipc_echo_of(page)->value);
        ica_return((uint64_t)control);
    }
    return 1;
}

/* The lender's IPC_LEND: its block filled with the value and lent. */
static void lender_answer_lend(void *context, uint64_t control)
{
    uint64_t block = *(const uint64_t *)context;
    struct ica_control *page = ica_control_of(control);
    memset(ica_address(block), (int)ipc_lend_of(page)->value, 4096);
    page->result = request_lend(control, block);
    ica_return(control);
}

static long lender_role_step(void *context, uint64_t step)
{
    return lender_step(*(const uint64_t *)context, step);
}

/* `blocklend NAME`: holds one block ICA; IPC_LEND fills it with the value
 * and lends it with the answer; IPC_ECHO counts its lends, frees it or
 * writes it (lender_step). */
int block_lender_role(char **argv)
{
    long block = ica_allocate(ICA_KIND_BLOCK, 4096);
    if (block < 0 || server_register(argv[0]) != 0)
        return 1;
    uint64_t held = (uint64_t)block;
    struct lend_role role = {lender_answer_lend, lender_role_step, &held};
    return serve_lend_role(&role);
}

/* The middle's state: its lender, the control ICA it borrows with (kept,
 * as FS keeps BLK's answer) and the block lent with it. */
struct middle {
    long lender;
    long borrowed;
    uint64_t block;
};

/* Lends the block on to the lender that holds it, which writes it then. */
static long lend_back(const struct middle *middle)
{
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0)
        return control;
    request_prepare((uint64_t)control, IPC_ECHO);
    ipc_echo_of(ica_control_of((uint64_t)control))->value = STEP_WRITE;
    request_lend((uint64_t)control, middle->block);
    long result = request_call(middle->lender, (uint64_t)control);
    ica_free((uint64_t)control);
    return result;
}

static long middle_step(struct middle *middle, uint64_t step);

static long middle_role_step(void *context, uint64_t step)
{
    return middle_step(context, step);
}

static long middle_step(struct middle *middle, uint64_t step)
{
    struct ica_control *borrowed = ica_control_of((uint64_t)middle->borrowed);
    const uint8_t *bytes = ica_address(middle->block);
    long error;
    switch (step) {
    case STEP_BORROW:
        error = ipc_call_lend(middle->lender, (uint64_t)middle->borrowed, LENT_BYTE);
        if (error == 0 && borrowed->lent_count != 1)
            return -E_INVALID;
        middle->block = error == 0 ? borrowed->lent[0] : 0;
        return error;
    case STEP_COUNT:
        return ica_lend_count(middle->block);
    case STEP_READ:
        return middle->block != 0 && bytes[0] == bytes[4095] ? bytes[0] : -E_INVALID;
    case STEP_GIVE_BACK:
        error = ica_free((uint64_t)middle->borrowed);
        middle->borrowed = ica_allocate(ICA_KIND_CONTROL, 4096);
        return error != 0 ? error : (middle->borrowed < 0 ? middle->borrowed : 0);
    case STEP_LEND_BACK:
        return lend_back(middle);
    default:
        return -E_INVALID;
    }
}

/* Answers `control` lending the middle's block on (FS's readblock answer);
 * a refused lend goes back as the result, with nothing lent. */
static void answer_lending_on(void *context, uint64_t control)
{
    uint64_t block = ((const struct middle *)context)->block;
    struct ica_control *page = ica_control_of(control);
    page->result = 0;
    request_lend(control, block);
    long refused = ica_return(control);
    if (refused != 0) {
        page->lent_count = 0;
        page->result = refused;
        ica_return(control);
    }
}

/* `lendon NAME LENDER`: borrows LENDER's block when asked and lends it on
 * with its answer to every IPC_LEND; IPC_ECHO takes a step. */
int lend_on_middle_role(char **argv)
{
    struct middle middle = {server_wait_for(argv[1], 5000), ica_allocate(ICA_KIND_CONTROL, 4096),
                            0};
    if (middle.lender < 0 || middle.borrowed < 0 || server_register(argv[0]) != 0)
        return 1;
    struct lend_role role = {answer_lending_on, middle_role_step, &middle};
    return serve_lend_role(&role);
}

/* `lendonpeek MIDDLE BLOCK`: BLOCK is neither held nor borrowed here, nor
 * by MIDDLE any more: lending it is refused, MIDDLE's lend-on is refused
 * with nothing lent, and reading it must fault (FAULT_EXIT_CODE). */
int lend_on_peek_role(char **argv)
{
    long middle = strtol(argv[0], NULL, 0);
    uint64_t block = strtoul(argv[1], NULL, 0);
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    request_prepare((uint64_t)control, IPC_ECHO);
    ipc_echo_of(ica_control_of((uint64_t)control))->value = STEP_COUNT;
    request_lend((uint64_t)control, block);
    bool ok = ica_request(middle, (uint64_t)control, ICA_SYNC) == -E_PERMISSION;
    ok &= ipc_call_lend(middle, (uint64_t)control, 0) == -E_PERMISSION &&
          ica_control_of((uint64_t)control)->lent_count == 0;
    if (!ok)
        return 1;
    volatile const uint8_t *bytes = ica_address(block);
    printf("icatest: read a block not lent here: %u\n", bytes[0]);
    return 3;
}

/* This process's side: the two servers, and its own control ICAs: lends on
 * arrive with `lends`, questions go with `asks`. */
struct chain {
    long lender, middle;
    uint64_t lends, asks;
};

static long ask(const struct chain *chain, long server, uint64_t step)
{
    return ipc_call_echo(server, chain->asks, step);
}

/* Starts the lender (on another core when there is one) and the middle
 * (on this one), which borrows the block. */
static bool chain_start(struct chain *chain)
{
    uint32_t other = online_cores() > 1 ? 1 : 0;
    chain->lender = start_server("icatest", "blocklend " LENDER_NAME, other, LENDER_NAME);
    chain->middle = start_server("icatest", "lendon " MIDDLE_NAME " " LENDER_NAME,
                                 (uint32_t)core_id(), MIDDLE_NAME);
    return chain->lender > 0 && chain->middle > 0 && ask(chain, chain->middle, STEP_BORROW) == 0;
}

/* Asks the middle for its block on `lends`: the block lent on, or 0. */
static uint64_t borrow_on(const struct chain *chain, long *result)
{
    *result = ipc_call_lend(chain->middle, chain->lends, 0);
    struct ica_control *page = ica_control_of(chain->lends);
    return *result == 0 && page->lent_count == 1 ? page->lent[0] : 0;
}

static bool reads_lent_byte(uint64_t block)
{
    const uint8_t *bytes = ica_address(block);
    return block != 0 && ica_kind(block) == ICA_KIND_BLOCK && bytes[0] == LENT_BYTE &&
           bytes[4095] == LENT_BYTE;
}

/* Waits up to `milliseconds` for the block pool's count to be `start`'s. */
static bool blocks_return_to(const struct ica_stats *start, uint64_t milliseconds)
{
    struct ica_stats now;
    for (uint64_t waited = 0;; waited += 10) {
        ica_stats(&now);
        if (now.block_free == start->block_free)
            return true;
        if (waited >= milliseconds)
            return false;
        sleep_ms(10);
    }
}

/* Stops the lender and waits (up to 2 s) until it is gone from the process
 * list: only then has the m-kernel taken back what it held (its block
 * orphaned); wait_process returns once it has ended, a little before. */
static bool lender_stopped(const struct chain *chain)
{
    static struct process_info processes[PROCESS_LIST_MAX];
    if (stop_ipcserver(chain->lender) != 0)
        return false;
    for (uint64_t waited = 0; waited <= 2000; waited += 10) {
        long count = process_list(processes, PROCESS_LIST_MAX);
        bool listed = count < 0;
        for (long i = 0; i < count; i++)
            listed |= processes[i].pid == (uint32_t)chain->lender;
        if (!listed)
            return true;
        sleep_ms(10);
    }
    return false;
}

/* Lent on to the lender that holds it, the block stays the lender's to
 * write, during that lend and after it ends. Steps that held, of 2. */
static int lend_on_to_its_lender(const struct chain *chain)
{
    int held = ask(chain, chain->middle, STEP_LEND_BACK) == LENT_BYTE;
    return held + (ask(chain, chain->lender, STEP_WRITE) == LENT_BYTE);
}

/* Lent on by this process back to the middle that borrows it, the block
 * stays readable there after that lend ends. Steps that held, of 2. */
static int lend_on_back_to_the_middle(const struct chain *chain, uint64_t block)
{
    request_prepare(chain->asks, IPC_ECHO);
    ipc_echo_of(ica_control_of(chain->asks))->value = STEP_READ;
    request_lend(chain->asks, block);
    int held = request_call(chain->middle, chain->asks) == LENT_BYTE;
    return held + (ask(chain, chain->middle, STEP_READ) == LENT_BYTE);
}

/* While this process holds its lend-on, lender and middle both count 2 and
 * the lender cannot free the block; each lend's end takes one off (this
 * process's at its next handover of `lends`, the middle's when it gives
 * its control ICA back). The steps that held, of COUNT_STEPS. */
#define COUNT_STEPS 7
static int lend_on_counts(const struct chain *chain)
{
    int held = ask(chain, chain->middle, STEP_COUNT) == 2;
    held += ask(chain, chain->lender, STEP_COUNT) == 2;
    held += ask(chain, chain->lender, STEP_FREE) == -E_BUSY;
    held += ipc_call_echo(chain->middle, chain->lends, STEP_COUNT) == 1;
    held += ask(chain, chain->lender, STEP_COUNT) == 1;
    held += ask(chain, chain->middle, STEP_GIVE_BACK) == 0;
    return held + (ask(chain, chain->lender, STEP_COUNT) == 0);
}

/* The middle's lend has ended: its lend-on is refused here, and at a
 * helper that also tries to lend the block itself and then reads it. */
static bool lend_on_refused_unborrowed(const struct chain *chain, uint64_t block, int *code)
{
    long result = 0;
    bool refused = borrow_on(chain, &result) == 0 && result == -E_PERMISSION;
    char arguments[64];
    snprintf(arguments, sizeof arguments, "lendonpeek %ld %lu", chain->middle,
             (unsigned long)block);
    *code = run_helper(arguments, 0);
    return refused && *code == FAULT_EXIT_CODE;
}

/* The lender ends while the middle borrows: the middle's lend-on is
 * refused, its own lend still reads and counts, and the block is freed
 * when that last lend ends. The steps that held, of ENDED_STEPS. */
#define ENDED_STEPS 7
static int lend_on_after_lender_ends(struct chain *chain, const struct ica_stats *start)
{
    long result = 0;
    int held = chain_start(chain);
    held += lender_stopped(chain);
    held += borrow_on(chain, &result) == 0 && result == -E_SERVER_ENDED;
    held += ask(chain, chain->middle, STEP_READ) == LENT_BYTE;
    held += ask(chain, chain->middle, STEP_COUNT) == 1;
    held += ask(chain, chain->middle, STEP_GIVE_BACK) == 0 && blocks_return_to(start, 2000);
    return held + (stop_ipcserver(chain->middle) == 0);
}

/* The lender has ended and the middle's lend ends while this process holds
 * its lend-on: it still reads the block, freed only when its lend ends.
 * The steps that held, of OUTLIVES_STEPS. */
#define OUTLIVES_STEPS 7
static int lend_on_outlives_the_middle(struct chain *chain, const struct ica_stats *start)
{
    long result = 0;
    int held = chain_start(chain);
    uint64_t block = borrow_on(chain, &result);
    held += reads_lent_byte(block);
    held += lender_stopped(chain);
    held += ask(chain, chain->middle, STEP_GIVE_BACK) == 0;
    held += reads_lent_byte(block) && !blocks_return_to(start, 100);
    request_prepare(chain->lends, IPC_ECHO); /* this process's next handover ends its lend */
    held +=
        ica_request(chain->middle, chain->lends, ICA_SYNC) == 0 && blocks_return_to(start, 2000);
    return held + (stop_ipcserver(chain->middle) == 0);
}

bool lend_on_cases(void)
{
    struct ica_stats start;
    ica_stats(&start);
    struct chain chain = {0, 0, (uint64_t)ica_allocate(ICA_KIND_CONTROL, 4096),
                          (uint64_t)ica_allocate(ICA_KIND_CONTROL, 4096)};
    bool started = chain_start(&chain);
    bool ok = report_case("lend_on_start", started, started, 1);
    long result = 0;
    uint64_t block = borrow_on(&chain, &result);
    ok &= report_case("lend_on_read", reads_lent_byte(block), result, 0);
    char arguments[32];
    snprintf(arguments, sizeof arguments, "lendwrite %ld", chain.middle);
    int code = run_helper(arguments, 0);
    ok &= report_case("lend_on_is_read_only", code == FAULT_EXIT_CODE, code, FAULT_EXIT_CODE);
    int held = lend_on_to_its_lender(&chain);
    ok &= report_case("lend_on_to_its_lender", held == 2, held, 2);
    held = lend_on_back_to_the_middle(&chain, block);
    ok &= report_case("lend_on_back_to_the_middle", held == 2, held, 2);
    held = lend_on_counts(&chain);
    ok &= report_case("lend_on_count", held == COUNT_STEPS, held, COUNT_STEPS);
    ok &= report_case("lend_on_not_borrowed", lend_on_refused_unborrowed(&chain, block, &code),
                      code, FAULT_EXIT_CODE);
    long freed = ask(&chain, chain.lender, STEP_FREE);
    ok &= report_case("lend_on_lender_frees", freed == 0, freed, 0);
    held = (stop_ipcserver(chain.lender) == 0) + (stop_ipcserver(chain.middle) == 0);
    ok &= report_case("lend_on_stop_servers", held == 2, held, 2);
    held = lend_on_after_lender_ends(&chain, &start);
    ok &= report_case("lend_on_after_lender_ends", held == ENDED_STEPS, held, ENDED_STEPS);
    held = lend_on_outlives_the_middle(&chain, &start);
    ok &= report_case("lend_on_outlives_the_middle", held == OUTLIVES_STEPS, held, OUTLIVES_STEPS);
    ica_free(chain.lends);
    ica_free(chain.asks);
    return ok;
}
