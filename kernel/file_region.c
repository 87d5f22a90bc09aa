/* file_region.c: the running process's side of file regions (mmap,
 * docs/mmap.md). SYS_FILE_REGION asks the m-kernel for the region; a fault
 * in it becomes FS_MAP_FAULT on the process's file region control ICA,
 * exactly as a pager fault becomes PAGER_FAULT; BLK's answer (forwarded by
 * FS with direct return) lends the blocks, and each becomes a mapping lend
 * at its page. SYS_FILE_REGION_END ends the lends of a range, then the
 * m-kernel cuts the records (a region cut in the middle becomes two). */
#include "file_region.h"
#include "console.h"
#include "cpu.h"
#include "ica/ica.h"
#include "ica/ica_syscalls.h"
#include "ica/mapping_lend.h"
#include "layout.h"
#include "mkernel_client.h"
#include "scheduler.h"
#include "server_registry.h"
#include "shared.h"
#include "user_memory.h"
#include "x86.h"
#include <formica/errors.h>
#include <formica/file_region.h>
#include <formica/protocol/blk.h>
#include <formica/protocol/fs.h>
#include <formica/protocol/syscall_table.h>
#include <string.h>
#include <sys/mman.h>

#define BUSY_RETRIES 200 /* FS_MAP_FAULT answered -E_BUSY: 10 ms apart */
#define BUSY_WAIT_MS 10
#define FS_RESTART_WAIT_MS 30000 /* for a restarted FS, as the pager's faults wait */
#define FS_RESTART_RETRIES 3

static struct process *me(void)
{
    return this_cpu()->current;
}

static bool one_of_shared_and_private(uint32_t flags)
{
    return ((flags & FILE_REGION_SHARED) != 0) != ((flags & FILE_REGION_PRIVATE) != 0);
}

long sys_file_region(uint64_t handle, uint64_t address, uint64_t bytes, uint32_t flags, uint32_t fs,
                     uint64_t offset)
{
    if ((flags & ~FILE_REGION_KNOWN_FLAGS) != 0 || !one_of_shared_and_private(flags) ||
        bytes == 0 || bytes > FILE_REGION_MAX_BYTES || offset % PAGE_SIZE != 0)
        return -E_INVALID;
    bytes = (bytes + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
    struct intercore_message request = {
        .type = MESSAGE_FILE_REGION,
        .file_region = {me()->pid, fs, handle, address, bytes, flags, offset},
    };
    struct intercore_message reply;
    mkernel_request(&request, &reply);
    return reply.file_region_reply.result;
}

static struct file_region *region_at(struct process *process, uint64_t address)
{
    for (uint32_t i = 0; i < FILE_REGIONS_PER_PROCESS; i++) {
        struct file_region *region = &process->file_regions[i];
        if (region->bytes != 0 && address >= region->base && address - region->base < region->bytes)
            return region;
    }
    return NULL;
}

/* The lowest region of the process that meets [from, to), or NULL. */
static struct file_region *lowest_region_in(struct process *process, uint64_t from, uint64_t to)
{
    struct file_region *lowest = NULL;
    for (uint32_t i = 0; i < FILE_REGIONS_PER_PROCESS; i++) {
        struct file_region *region = &process->file_regions[i];
        if (region->bytes != 0 && region->base < to && from < region->base + region->bytes &&
            (lowest == NULL || region->base < lowest->base))
            lowest = region;
    }
    return lowest;
}

/* Whether cutting [from, to) out would split a region in two while every
 * region slot is taken (then nothing is cut: -E_BUSY). */
static bool split_without_room(struct process *process, uint64_t from, uint64_t to)
{
    struct file_region *region = region_at(process, from);
    if (region == NULL || from == region->base || to >= region->base + region->bytes)
        return false;
    for (uint32_t i = 0; i < FILE_REGIONS_PER_PROCESS; i++)
        if (process->file_regions[i].bytes == 0)
            return false;
    return true;
}

/* [from, to) cut out of `region` (which holds all of it): its mapping
 * lends end here, on the mapper's core; the m-kernel frees its private
 * copies and cuts the record. The region's FS handle goes to `closed` when
 * no part of its mapping is left. */
static long end_part(struct process *process, uint64_t from, uint64_t to, uint64_t *closed,
                     uint32_t *closing)
{
    mapping_lends_end(process, from, to - from);
    struct intercore_message request = {.type = MESSAGE_FILE_REGION_END,
                                        .file_region_end = {process->pid, from, to - from}};
    struct intercore_message reply;
    mkernel_request(&request, &reply);
    if (reply.file_region_end_reply.result != 0)
        return reply.file_region_end_reply.result;
    if (reply.file_region_end_reply.last && *closing < FILE_REGIONS_PER_PROCESS)
        closed[(*closing)++] = reply.file_region_end_reply.handle;
    return 0;
}

/* The m-kernel unmapped frames of the process's (its private copies): on a
 * p-kernel's core this core may still hold their translations, and the
 * process resumes without a switch that would reload them. */
static void drop_stale_translations(void)
{
    write_cr3(read_cr3());
}

static bool range_ok(uint64_t address, uint64_t bytes)
{
    return address % PAGE_SIZE == 0 && bytes != 0 && address <= UINT64_MAX - PAGE_SIZE &&
           bytes <= UINT64_MAX - PAGE_SIZE - address; /* rounded up, the end does not wrap */
}

long sys_file_region_end(uint64_t address, uint64_t bytes, uint64_t handles)
{
    struct process *process = me();
    uint64_t room = sizeof(uint64_t) * FILE_REGIONS_PER_PROCESS;
    if (!range_ok(address, bytes))
        return -E_INVALID; /* POSIX: EINVAL */
    uint64_t end = address + ((bytes + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1));
    if ((handles < end && address < handles + room) ||
        !user_range_ok(process->root, handles, room, true))
        return -E_FAULT;
    if (split_without_room(process, address, end))
        return -E_BUSY;
    uint64_t closed[FILE_REGIONS_PER_PROCESS];
    uint32_t closing = 0;
    for (struct file_region *region = lowest_region_in(process, address, end); region != NULL;
         region = lowest_region_in(process, address, end)) {
        uint64_t from = address > region->base ? address : region->base;
        uint64_t to = end < region->base + region->bytes ? end : region->base + region->bytes;
        long error = end_part(process, from, to, closed, &closing);
        if (error != 0) {
            drop_stale_translations();
            return error;
        }
    }
    drop_stale_translations();
    long copied = copy_to_user(handles, closed, sizeof(uint64_t) * closing);
    return copied != 0 ? copied : (long)closing;
}

/* MADV_DONTNEED: the range's mapping lends end, and the m-kernel frees
 * its private copies (and a hole's zeroes): the next access faults the
 * file's page in again, as Linux does for a private file mapping. */
static long drop_pages(struct process *process, uint64_t address, uint64_t bytes)
{
    bytes = (bytes + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
    mapping_lends_end(process, address, bytes);
    struct intercore_message request = {.type = MESSAGE_FILE_REGION_DROP,
                                        .file_region_drop = {process->pid, address, bytes}};
    struct intercore_message reply;
    mkernel_request(&request, &reply);
    drop_stale_translations();
    return reply.file_region_drop_reply.result;
}

long sys_file_region_advise(uint64_t address, uint64_t bytes, uint32_t advice)
{
    struct process *process = me();
    struct file_region *region = region_at(process, address);
    if (region == NULL || address % PAGE_SIZE != 0 ||
        bytes > region->bytes - (address - region->base))
        return -E_INVALID;
    switch (advice) {
    case MADV_NORMAL:
        region->flags &= ~FILE_REGION_SEQUENTIAL;
        return 0;
    case MADV_SEQUENTIAL:
        region->flags |= FILE_REGION_SEQUENTIAL;
        return 0;
    case MADV_DONTNEED:
        return drop_pages(process, address, bytes);
    }
    return -E_INVALID;
}

/* How many pages from `page` to ask for: the fault-around for a fault
 * right after the last one (or a region advised sequential), within the
 * region. */
static uint32_t pages_wanted(const struct file_region *region, uint64_t page)
{
    bool sequential = (region->flags & FILE_REGION_SEQUENTIAL) || region->last_fault == page;
    uint64_t left = region->bytes / PAGE_SIZE - page;
    uint32_t wanted = sequential ? FILE_REGION_FAULT_AROUND : 1;
    return left < wanted ? (uint32_t)left : wanted;
}

/* The pid of the FS instance nearest the process now, waiting up to 30 s
 * for one to be registered (a restarted FS); 0 if none came. The same FS
 * when it is alive: the answer's end was BLK's (FS reconnects to the
 * restarted shard). */
static uint32_t fs_now(const struct process *process)
{
    for (int waited = 0; waited < FS_RESTART_WAIT_MS; waited += 50) {
        uint32_t fs = server_pid_nearest(SERVER_NAME_FS, process->core);
        if (fs != 0)
            return fs;
        scheduler_sleep(50);
    }
    return 0;
}

static bool fs_ended(long error, const struct ica_control *message)
{
    return error == -E_SERVER_ENDED || error == -E_NOT_FOUND ||
           (error == 0 && message->result == -E_SERVER_ENDED);
}

/* One FS_MAP_FAULT, asked again while FS answers -E_BUSY (a block its
 * journal holds), and again (of the restarted FS, whose handles are the
 * ended one's: docs/recovery.md) when FS or BLK ended before answering;
 * the answer's result, or the error of sending. */
static long ask_fs(struct process *process, struct file_region *region, uint64_t page,
                   uint32_t pages, uint32_t flags)
{
    struct ica *control = ica_lookup(process->file_region_control);
    if (control == NULL || control->state != ICA_HELD || control->owner != process->pid)
        return -E_NOT_FOUND;
    struct ica_control *message = phys_to_virt(control->physical);
    int busy = 0, restarts = 0;
    for (;;) {
        memset(message, 0, sizeof(*message));
        message->magic = ICA_CONTROL_MAGIC;
        message->operation = FS_MAP_FAULT;
        *fs_map_fault_of(message) = (struct fs_map_fault_message){
            region->handle, region->offset / PAGE_SIZE + page, pages, flags};
        long error = ica_call_for_current(region->fs, process->file_region_control);
        if (fs_ended(error, message) && restarts++ < FS_RESTART_RETRIES) {
            uint32_t fs = fs_now(process);
            if (fs == 0)
                return -E_SERVER_ENDED;
            if (fs != region->fs)
                kprintf("core %u: the FS of a file region of '%s' (pid %u) ended; its faults go "
                        "to pid %u\n",
                        this_cpu()->index, process->name, process->pid, fs);
            region->fs = fs;
            continue;
        }
        if (error != 0)
            return error;
        if (message->result != -E_BUSY || busy++ == BUSY_RETRIES)
            return message->result;
        scheduler_sleep(BUSY_WAIT_MS);
    }
}

static void __attribute__((noreturn))
end_past_end(struct process *process, uint64_t address, const struct file_region *region)
{
    kprintf("core %u: process '%s' (pid %u) touched 0x%lx, a mapped page past the end of its "
            "file (file offset %lu): ended as by SIGBUS (exit code %d)\n",
            this_cpu()->index, process->name, process->pid, address,
            region->offset + (address - region->base), FILE_REGION_EXIT_PAST_END);
    scheduler_exit_current(FILE_REGION_EXIT_PAST_END);
}

/* A page past the end: the process ends (a fault from user mode), or the
 * system call that touched it gets -E_FAULT (false). */
static bool past_end(struct process *process, uint64_t address, const struct file_region *region,
                     bool in_kernel)
{
    if (!in_kernel)
        end_past_end(process, address, region);
    return false;
}

static void report_unserved(struct process *process, uint64_t address, long error)
{
    kprintf("core %u: mapped file page of '%s' (pid %u) at 0x%lx could not be served: %s\n",
            this_cpu()->index, process->name, process->pid, address, error_text(error));
}

/* A frame of the m-kernel's, charged to the process's account: a copy of
 * the lent page `source`, or zeroes (0); its address, or an error. */
static long frame_from_mkernel(const struct process *process, uint64_t source)
{
    struct intercore_message request = {.type = MESSAGE_FILE_REGION_COPY,
                                        .file_region_copy = {process->pid, source}};
    struct intercore_message reply;
    mkernel_request(&request, &reply);
    return reply.file_region_copy_reply.result;
}

/* A frame of the process's own at `address` (from the m-kernel, charged to
 * its account): a copy of the lent page `source`, or zeroes (0); the lend
 * there, if any, ends. An account at its limit gives back some of the
 * process's other mapping lends first, as a fault does. */
static bool private_page(struct process *process, uint64_t address, uint64_t source, bool writable)
{
    long frame = frame_from_mkernel(process, source);
    while (frame == -E_QUOTA && mapping_lends_give_back(process, FILE_REGION_FAULT_AROUND, address,
                                                        address + PAGE_SIZE) > 0)
        frame = frame_from_mkernel(process, source);
    if (frame < 0) {
        report_unserved(process, address, frame);
        return false;
    }
    mapping_lend_swap_for_frame(process, address, (uint64_t)frame, writable);
    return true;
}

/* A fault refused because the process's account is at its memory limit and
 * it holds no mapping lend to give back: the process ends as by a page
 * fault, or the system call that touched the page gets -E_FAULT. */
static void report_account_full(const struct process *process, uint64_t address, bool in_kernel)
{
    kprintf("core %u: process '%s' (pid %u) faulted on mapped file page 0x%lx, but its account "
            "%u is at its memory limit (%lu KiB) and it holds no mapping lend to give back: "
            "refused (%s), %s\n",
            this_cpu()->index, process->name, process->pid, address, process->account,
            process->memory_limit / 1024, error_text(-E_QUOTA),
            in_kernel ? "its system call gets -E_FAULT" : "ended as by a page fault");
}

/* The lends of FS's answer installed from `address` (below `end`): true
 * when the faulting page is mapped, else the refusal is reported. */
static bool install_answer(struct process *process, uint64_t address, uint64_t end, bool writable,
                           long failure, bool in_kernel)
{
    long installed =
        mapping_lends_from_answer(process, process->file_region_control, address, end, writable);
    if (installed > 0)
        return true;
    if (installed == -E_QUOTA)
        report_account_full(process, address, in_kernel);
    else
        report_unserved(process, address, failure);
    return false;
}

/* A read fault: FS_MAP_FAULT, and the blocks of the answer mapped from
 * `page` on. FS fills a hole of a shared writable mapping; any other hole
 * becomes zeroes of the process's own (read-only in a shared mapping: a
 * later write() of the hole is not seen there until it is mapped again). */
static bool map_page(struct process *process, struct file_region *region, uint64_t page,
                     bool in_kernel)
{
    uint64_t address = region->base + page * PAGE_SIZE;
    bool shared_writable = (region->flags & (FILE_REGION_SHARED | FILE_REGION_WRITE)) ==
                           (FILE_REGION_SHARED | FILE_REGION_WRITE);
    long result = ask_fs(process, region, page, pages_wanted(region, page),
                         shared_writable ? FS_MAP_FAULT_FILL_HOLES : 0);
    region->last_fault = page + 1;
    if (result == -E_PAST_END)
        return past_end(process, address, region, in_kernel);
    if (result == -E_NEEDS_DATA) /* a hole FS does not fill: zeroes of the process's own */
        return private_page(process, address, 0,
                            (region->flags & FILE_REGION_WRITE) && !shared_writable);
    if (result >= 0)
        return install_answer(process, address, region->base + region->bytes, false, -E_NOT_FOUND,
                              in_kernel);
    report_unserved(process, address, result);
    return false;
}

/* A store to a private page: the page brought in first if it is not
 * there, then the lent page copied into a frame of the process's own. */
static bool copy_on_write(struct process *process, struct file_region *region, uint64_t page,
                          bool present, bool in_kernel)
{
    uint64_t address = region->base + page * PAGE_SIZE;
    if (!present && !map_page(process, region, page, in_kernel))
        return false;
    uint64_t lent = mapping_lend_frame_at(process, address);
    if (lent == 0)
        return true; /* a hole's zeroes: the process's own page already */
    return private_page(process, address, lent, true);
}

/* Whether BLK's answer on the control ICA granted stores (BLK_MAP's out). */
static bool stores_granted(const struct process *process)
{
    const struct ica *control = ica_lookup(process->file_region_control);
    if (control == NULL)
        return false;
    struct ica_control *page = phys_to_virt(control->physical);
    return page->operation == BLK_MAP && blk_map_of(page)->writable == 1;
}

/* A store to a shared page: the read-only lend there, if any, ends, and
 * FS_MAP_FAULT_WRITE brings BLK's block back writable (BLK marks it dirty). */
static bool map_for_store(struct process *process, struct file_region *region, uint64_t page,
                          bool present, bool in_kernel)
{
    uint64_t address = region->base + page * PAGE_SIZE;
    if (present)
        mapping_lend_end_at(process, address);
    long result = ask_fs(process, region, page, 1, FS_MAP_FAULT_WRITE);
    region->last_fault = page + 1;
    if (result == -E_PAST_END)
        return past_end(process, address, region, in_kernel);
    if (result >= 0 && stores_granted(process))
        return install_answer(process, address, address + PAGE_SIZE, true, -E_PERMISSION,
                              in_kernel);
    report_unserved(process, address, result < 0 ? result : -E_PERMISSION);
    return false;
}

/* file_region_resolve_fault, and file_region_bring_in with `in_kernel`:
 * then a page past the end is refused instead of ending the process. */
static bool resolve(uint64_t address, uint64_t error_code, bool in_kernel)
{
    struct process *process = me();
    struct file_region *region = process != NULL ? region_at(process, address) : NULL;
    if (region == NULL)
        return false;
    bool write = (error_code & 2) != 0, present = (error_code & 1) != 0;
    if ((write && !(region->flags & FILE_REGION_WRITE)) || (present && !write))
        return false; /* a store to a read-only mapping: a fault as anywhere else */
    uint64_t page = (address - region->base) / PAGE_SIZE;
    if (!write)
        return map_page(process, region, page, in_kernel);
    if (region->flags & FILE_REGION_PRIVATE)
        return copy_on_write(process, region, page, present, in_kernel);
    return map_for_store(process, region, page, present, in_kernel);
}

bool file_region_resolve_fault(uint64_t address, uint64_t error_code)
{
    return resolve(address, error_code, false);
}

bool file_region_bring_in(uint64_t address, bool write, bool present)
{
    return resolve(address, (write ? 2u : 0u) | (present ? 1u : 0u), true);
}
