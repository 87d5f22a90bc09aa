/* pagertest: checks the kernel's remote-paging calls without the real pager.
 * `pagertest` starts `pagertest serve` (a tiny pager that keeps at most two
 * 4 KiB blocks resident and swaps the rest into its own heap), takes a pager
 * region, writes and re-reads eight blocks, and checks every byte and the
 * error cases. */
#include <formica/pager.h>
#include <stdbool.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK 4096u
#define BLOCKS 8u
#define RESIDENT_LIMIT 2u

struct stored_block {
    bool on_backend;
    bool resident;
    uint8_t bytes[BLOCK];
};

static struct stored_block blocks[BLOCKS];
static uint64_t region_base;
static uint32_t resident_order[BLOCKS], resident_count;
static long swap_ins, swap_outs, clean_drops;

static long syscall_pager(long number, long a, long b, long c, long d)
{
    return syscall6(number, a, b, c, d, 0, 0);
}

static long evict_one(long pid)
{
    uint32_t victim = resident_order[0];
    memmove(resident_order, resident_order + 1, --resident_count * sizeof(uint32_t));
    uint64_t address = region_base + (uint64_t)victim * BLOCK;
    long bits = syscall_pager(SYS_PAGER_SCAN, pid, (long)address, BLOCK, 0);
    if (bits < 0)
        return bits;
    blocks[victim].resident = false;
    if (!(bits & PAGER_SCAN_DIRTY) && blocks[victim].on_backend) {
        clean_drops++;
        return syscall_pager(SYS_PAGER_UNMAP, pid, (long)address, BLOCK, 0);
    }
    long ica = syscall_pager(SYS_PAGER_UNMAP, pid, (long)address, BLOCK, 1);
    if (ica <= 0)
        return ica < 0 ? ica : -E_INVALID;
    memcpy(blocks[victim].bytes, ica_address((uint64_t)ica), BLOCK);
    blocks[victim].on_backend = true;
    swap_outs++;
    return ica_free((uint64_t)ica);
}

static long bring_in(long pid, uint64_t address)
{
    uint32_t index = (uint32_t)((address - region_base) / BLOCK);
    if (index >= BLOCKS || blocks[index].resident)
        return index >= BLOCKS ? -E_INVALID : 0;
    while (resident_count >= RESIDENT_LIMIT) {
        long error = evict_one(pid);
        if (error != 0)
            return error;
    }
    long ica = 0;
    if (blocks[index].on_backend) {
        ica = ica_allocate(ICA_KIND_DATA, BLOCK);
        if (ica < 0)
            return ica;
        memcpy(ica_address((uint64_t)ica), blocks[index].bytes, BLOCK);
        swap_ins++;
    }
    long error = syscall_pager(SYS_PAGER_MAP, pid, (long)(region_base + (uint64_t)index * BLOCK),
                               BLOCK, ica);
    if (error != 0)
        return error;
    blocks[index].resident = true;
    resident_order[resident_count++] = index;
    return 0;
}

static int serve(void)
{
    server_register("ptest");
    for (;;) {
        long control = ica_receive(0);
        if (control < 0) {
            printf("pagertest: receive failed: %s\n", error_text(control));
            return 1;
        }
        struct ica_control *page = ica_control_of((uint64_t)control);
        if (page->operation == PAGER_FAULT) {
            const struct pager_fault_message *fault = pager_fault_of(page);
            if (region_base == 0)
                region_base = fault->address & ~(uint64_t)(PAGER_REGION_MAX_BYTES - 1);
            page->result = bring_in((long)fault->pid, fault->address & ~(uint64_t)(BLOCK - 1));
        } else if (page->operation == PAGER_STATS) {
            *pager_stats_of(page) = (struct pager_stats_message){
                .swap_in_blocks = (uint64_t)swap_ins,
                .swap_out_blocks = (uint64_t)swap_outs,
                .clean_drops = (uint64_t)clean_drops,
            };
            page->result = 0;
        } else if (page->operation == PAGER_CLEANUP) {
            page->result = 0;
            ica_return((uint64_t)control);
            return 0;
        } else {
            page->result = -E_INVALID;
        }
        ica_return((uint64_t)control);
    }
}

static int failed_reports; /* check() exits non-zero when any case failed */

static void report(const char *name, bool ok, long value)
{
    failed_reports += ok ? 0 : 1;
    printf("@json {\"kind\":\"pagertest\",\"case\":\"%s\",\"ok\":%s,\"value\":%ld}\n", name,
           ok ? "true" : "false", value);
}

static int check(void)
{
    spawn("pagertest", "serve", CORE_ANY, PRIORITY_SERVER);
    long pager = server_wait_for("ptest", 5000);
    long base = syscall_pager(SYS_PAGER_REGION, pager, BLOCK * BLOCKS, 0, 0);
    report("region", base == (long)PAGER_REGION_BASE, base);
    if (base < 0)
        return 1;
    uint8_t *memory = (uint8_t *)base;
    for (uint32_t round = 0; round < 3; round++)
        for (uint32_t i = 0; i < BLOCKS * BLOCK; i += 512)
            memory[i] = (uint8_t)(i / 512 + round);
    bool intact = true;
    for (uint32_t i = 0; i < BLOCKS * BLOCK; i += 512)
        intact &= memory[i] == (uint8_t)(i / 512 + 2);
    report("contents", intact, 0);
    /* Each block's first byte, after swapping out and in again: (i / 512 + 2). */
    long reread = 0, expected = 0;
    for (uint32_t i = 0; i < BLOCKS * BLOCK; i += BLOCK) {
        reread += memory[i];
        expected += (uint8_t)(i / 512 + 2);
    }
    report("reread", reread == expected, reread);
    /* a write() from pager memory: the kernel brings the page in itself */
    long written = console_write(memory + 3 * BLOCK, 1);
    report("syscall_on_paged_memory", written == 1, written);
    long stray = syscall_pager(SYS_PAGER_MAP, process_id(), base, BLOCK, 0);
    report("map_by_non_pager_refused", stray == -E_PERMISSION || stray == -E_NOT_FOUND, stray);
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    long stats = request_operation(pager, (uint64_t)control, PAGER_STATS);
    const struct pager_stats_message *counts = pager_stats_of(ica_control_of((uint64_t)control));
    report("swapped", stats == 0 && counts->swap_out_blocks > 0 && counts->swap_in_blocks > 0,
           (long)counts->swap_out_blocks);
    report("clean_drops", counts->clean_drops > 0, (long)counts->clean_drops);
    long released = syscall_pager(SYS_PAGER_RELEASE, 0, 0, 0, 0);
    report("release", released == 0, released);
    request_operation(pager, (uint64_t)control, PAGER_CLEANUP); /* the test pager ends */
    return failed_reports == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "serve") == 0)
        return serve();
    int result = check();
    if (argc > 1 && strcmp(argv[1], "touch-after-release") == 0) {
        printf("touching the released region\n");
        *(volatile uint8_t *)PAGER_REGION_BASE = 1; /* must end this process */
    }
    return result;
}
