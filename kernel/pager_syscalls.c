/* pager_syscalls.c: the running process's side of remote paging. A fault in
 * its pager region becomes a PAGER_FAULT request on the control ICA the
 * region came with; the process waits like any requester. The pager's calls
 * that change another process's mappings run in the m-kernel; a data ICA
 * whose frames move into a process is first peeled here, on the pager's own
 * core, so no stale translation of it survives. */
#include "pager_syscalls.h"
#include "console.h"
#include "cpu.h"
#include "ica/ica.h"
#include "server_registry.h"
#include "ica/ica_syscalls.h"
#include "layout.h"
#include "mkernel_client.h"
#include "shared.h"
#include "scheduler.h"
#include "user_memory.h"
#include "x86.h"
#include <formica/errors.h>
#include <formica/pager.h>
#include <string.h>

#define PAGER_RESTART_WAIT_MS 30000
#define PAGER_FAULT_RETRIES 3

static struct process *me(void)
{
    return this_cpu()->current;
}

/* Sends `request` to the m-kernel; its reply. */
static struct intercore_message ask_mkernel(struct intercore_message *request)
{
    struct intercore_message reply;
    mkernel_request(request, &reply);
    return reply;
}

long sys_pager_region(uint32_t pager, uint64_t bytes)
{
    struct intercore_message request = {.type = MESSAGE_PAGER_REGION,
                                        .pager_region = {me()->pid, pager, bytes}};
    return ask_mkernel(&request).pager_region_reply.result;
}

long sys_pager_map(uint32_t pid, uint64_t address, uint64_t bytes, uint64_t ica)
{
    uint64_t ica_id = ica;
    if (ica_id != 0) {
        struct ica *ica = ica_lookup(ica_id);
        if (ica == NULL || ica->kind != ICA_KIND_DATA)
            return -E_INVALID;
        if (ica->state != ICA_HELD || ica->owner != me()->pid || ica->lend_count > 0)
            return -E_PERMISSION;
        ica_peel(me(), ica); /* here, with invlpg: its frames are about to move */
        ica->state = ICA_TRAVELLING;
        ica->destination = 0;
    }
    struct intercore_message request = {
        .type = MESSAGE_PAGER_MAP,
        .pager_map = {me()->pid, pid, address, bytes, ica_id},
    };
    long result = ask_mkernel(&request).pager_map_reply.result;
    if (result != 0 && ica_id != 0) {
        struct ica *ica = ica_lookup(ica_id);
        if (ica != NULL && ica->state == ICA_TRAVELLING && ica_paste(me(), ica))
            ica->state = ICA_HELD; /* refused: the pager keeps its ICA */
    }
    return result;
}

long sys_pager_unmap(uint32_t pid, uint64_t address, uint64_t bytes, uint32_t keep)
{
    struct intercore_message request = {
        .type = MESSAGE_PAGER_UNMAP,
        .pager_unmap = {me()->pid, pid, address, bytes, keep},
    };
    return ask_mkernel(&request).pager_unmap_reply.result;
}

long sys_pager_scan(uint32_t pid, uint64_t address, uint64_t bytes, uint32_t flags)
{
    struct intercore_message request = {
        .type = MESSAGE_PAGER_SCAN,
        .pager_scan = {me()->pid, pid, address, bytes, flags},
    };
    return ask_mkernel(&request).pager_scan_reply.result;
}

long sys_pager_release(void)
{
    struct intercore_message request = {.type = MESSAGE_PAGER_RELEASE,
                                        .pager_release = {me()->pid}};
    long result = ask_mkernel(&request).pager_release_reply.result;
    write_cr3(read_cr3()); /* the region's frames are gone: drop their translations */
    return result;
}

/* The pid now registered under the name the process's pager had, waiting up
 * to 30 s for a restarted one other than the pager that ended; 0 if none came. */
static uint32_t restarted_pager(const struct process *process)
{
    for (int waited = 0; waited < PAGER_RESTART_WAIT_MS; waited += 50) {
        uint32_t pager = server_pid_nearest(process->pager_name, process->core);
        if (pager != 0 && pager != process->pager)
            return pager;
        scheduler_sleep(50);
    }
    return 0;
}

static bool pager_ended(long error, const struct ica_control *page)
{
    return error == -E_SERVER_ENDED || error == -E_NOT_FOUND ||
           (error == 0 && page->result == -E_SERVER_ENDED);
}

/* One PAGER_FAULT to the process's pager; a pager that ended before
 * answering is replaced by the restarted one and asked again. */
bool pager_resolve_fault(uint64_t address, uint64_t error_code)
{
    struct process *process = me();
    if (process == NULL || process->pager == 0 || address < process->pager_base ||
        address - process->pager_base >= process->pager_bytes)
        return false;
    struct ica *control = ica_lookup(process->pager_control);
    if (control == NULL || control->state != ICA_HELD || control->owner != process->pid)
        return false;
    struct ica_control *page = phys_to_virt(control->physical);
    long error = 0;
    for (int attempt = 0; attempt <= PAGER_FAULT_RETRIES; attempt++) {
        memset(page, 0, sizeof(*page));
        page->magic = ICA_CONTROL_MAGIC;
        page->operation = PAGER_FAULT;
        *pager_fault_of(page) = (struct pager_fault_message){process->pid, address, error_code};
        error = ica_call_for_current(process->pager, process->pager_control);
        if (error == 0 && page->result == 0)
            return true;
        if (!pager_ended(error, page) || attempt == PAGER_FAULT_RETRIES)
            break;
        uint32_t pager = restarted_pager(process);
        if (pager == 0)
            break;
        kprintf("core %u: the pager of '%s' (pid %u) ended; its fault goes to pid %u\n",
                this_cpu()->index, process->name, process->pid, pager);
        process->pager = pager;
    }
    kprintf("core %u: pager could not serve '%s' (pid %u) at 0x%lx: %s\n", this_cpu()->index,
            process->name, process->pid, address, error_text(error != 0 ? error : page->result));
    return false;
}
