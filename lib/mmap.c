/* mmap.c: POSIX mmap, munmap, msync and madvise over file regions
 * (sys/mman.h, docs/mmap.md). mmap asks FS to check the descriptor
 * (FS_MAP, which answers a handle of the region's own), then the kernel for
 * the region (SYS_FILE_REGION); faults in it are the kernel's and FS's
 * business from then on. munmap ends any range of the regions (the kernel
 * cuts its records) and closes the FS handle of each mapping whose last
 * part ended; MAP_FIXED unmaps what lies under the new mapping first. */
#include "file_internal.h"
#include <formica/errors.h>
#include <formica/file_region.h>
#include <formica/protocol/syscalls.h>
#include <sys/mman.h>

static long last_error;

/* The process's regions, for msync: one process has one thread, no lock. */
struct mapping {
    uint64_t base, bytes, handle;
};
static struct mapping mappings[FILE_REGIONS_PER_PROCESS];

static struct mapping *mapping_at(uint64_t address)
{
    for (uint32_t i = 0; i < FILE_REGIONS_PER_PROCESS; i++)
        if (mappings[i].bytes != 0 && address - mappings[i].base < mappings[i].bytes)
            return &mappings[i];
    return NULL;
}

static void remember_mapping(uint64_t base, uint64_t bytes, uint64_t handle)
{
    for (uint32_t i = 0; i < FILE_REGIONS_PER_PROCESS; i++) {
        if (mappings[i].bytes == 0) {
            mappings[i] = (struct mapping){base, bytes, handle};
            return;
        }
    }
}

/* The records with [from, to) cut out, as the kernel cut its own: a
 * mapping cut in the middle becomes two with the same handle. */
static void forget_range(uint64_t from, uint64_t to)
{
    for (uint32_t i = 0; i < FILE_REGIONS_PER_PROCESS; i++) {
        struct mapping *mapping = &mappings[i];
        struct file_region_cut cut = file_region_cut(mapping->base, mapping->bytes, from, to);
        if (mapping->bytes == 0 || cut.head_bytes == mapping->bytes)
            continue;
        if (cut.head_bytes != 0) {
            mapping->bytes = cut.head_bytes;
            if (cut.tail_bytes != 0) /* after `to`: later turns of this loop leave it */
                remember_mapping(cut.tail_base, cut.tail_bytes, mapping->handle);
        } else if (cut.tail_bytes != 0) {
            mapping->base = cut.tail_base;
            mapping->bytes = cut.tail_bytes;
        } else {
            *mapping = (struct mapping){0};
        }
    }
}

static uint64_t pages_of(uint64_t bytes)
{
    return (bytes + 4095) & ~(uint64_t)4095;
}

long mmap_error(void)
{
    return last_error;
}

static void *failed(long error)
{
    last_error = error;
    return MAP_FAILED;
}

/* FS_CLOSE of a region's handle (its mapping has ended or never began). */
static long close_region_handle(uint64_t handle)
{
    long error = file_channel_begin(FS_CLOSE, 0);
    if (error != 0)
        return error;
    fs_close_of(file_channel_page())->handle = handle;
    error = file_channel_call(false);
    return error < 0 ? error : 0;
}

/* FS_MAP of the descriptor's handle: the region's handle, or an error. */
static long map_request(const struct file_descriptor *file, uint64_t length, int protection,
                        int flags, int64_t offset)
{
    long error = file_channel_begin(FS_MAP, 0);
    if (error != 0)
        return error;
    *fs_map_of(file_channel_page()) = (struct fs_map_message){
        file->handle, (uint64_t)offset, length, (uint32_t)protection, (uint32_t)flags, 0};
    return file_channel_call(false);
}

static uint32_t region_flags(int protection, int flags)
{
    uint32_t region = 0;
    if (protection & PROT_READ)
        region |= FILE_REGION_READ;
    if (protection & PROT_WRITE)
        region |= FILE_REGION_WRITE;
    region |= (flags & MAP_SHARED) ? FILE_REGION_SHARED : FILE_REGION_PRIVATE;
    if (flags & MAP_FIXED)
        region |= FILE_REGION_FIXED;
    return region;
}

/* Whether a MAP_FIXED mapping at `address` may go there: then what lies
 * under it is unmapped first (anywhere else the kernel refuses it, and
 * nothing is unmapped). */
static bool fixed_place_allowed(uint64_t address, uint64_t length)
{
    return address % 4096 == 0 && address >= FILE_REGION_BASE && length != 0 &&
           length <= FILE_REGION_MAX_BYTES &&
           pages_of(length) <= FILE_REGION_BASE + FILE_REGION_WINDOW_BYTES - address;
}

void *mmap(void *address, size_t length, int protection, int flags, int fd, int64_t offset)
{
    struct file_descriptor *file = file_descriptor_get(fd);
    if (file == NULL)
        return failed(-E_BAD_HANDLE);
    if (offset < 0)
        return failed(-E_INVALID);
    long handle = map_request(file, length, protection, flags, offset);
    if (handle < 0)
        return failed(handle);
    long error = 0;
    if ((flags & MAP_FIXED) && fixed_place_allowed((uint64_t)address, length))
        error = munmap(address, length);
    long base = error != 0
                    ? error
                    : system_call_file_region((uint64_t)handle, (uint64_t)address, length,
                                              region_flags(protection, flags),
                                              (uint32_t)file_channel_fs_pid, (uint64_t)offset);
    if (base < 0) {
        close_region_handle((uint64_t)handle);
        return failed(base);
    }
    remember_mapping((uint64_t)base, pages_of(length), (uint64_t)handle);
    last_error = 0;
    return (void *)base;
}

int munmap(void *address, size_t length)
{
    uint64_t closed[FILE_REGIONS_PER_PROCESS];
    long count = system_call_file_region_end((uint64_t)address, length, closed);
    if (count < 0)
        return (int)count;
    forget_range((uint64_t)address, (uint64_t)address + pages_of(length));
    long error = 0;
    for (long i = 0; i < count; i++) {
        long closing = close_region_handle(closed[i]);
        error = error != 0 ? error : closing;
    }
    return (int)error;
}

int msync(void *address, size_t length, int flags)
{
    if (((flags & MS_SYNC) != 0) == ((flags & MS_ASYNC) != 0) ||
        (flags & ~(MS_SYNC | MS_ASYNC | MS_INVALIDATE)) != 0)
        return -E_INVALID;
    struct mapping *mapping = mapping_at((uint64_t)address);
    if (mapping == NULL || (uint64_t)address % 4096 != 0 ||
        length > mapping->bytes - ((uint64_t)address - mapping->base))
        return -E_INVALID;
    if (flags & MS_ASYNC)
        return 0; /* BLK writes the dirty blocks back at its periodic commit */
    long error = file_channel_begin(FS_MSYNC, 0);
    if (error != 0)
        return (int)error;
    fs_msync_of(file_channel_page())->handle = mapping->handle;
    error = file_channel_call(false);
    return error < 0 ? (int)error : 0;
}

/* MADV_WILLNEED faults the range in ahead (one load a page: each fault
 * brings the blocks after it too); the rest is the kernel's. */
int madvise(void *address, size_t length, int advice)
{
    if (mapping_at((uint64_t)address) == NULL)
        return -E_INVALID;
    if (advice != MADV_WILLNEED)
        return (int)system_call_file_region_advise((uint64_t)address, length, (uint32_t)advice);
    struct mapping *mapping = mapping_at((uint64_t)address);
    if ((uint64_t)address % 4096 != 0 ||
        length > mapping->bytes - ((uint64_t)address - mapping->base))
        return -E_INVALID;
    for (uint64_t at = 0; at < length; at += 4096)
        (void)*(volatile const uint8_t *)((const uint8_t *)address + at);
    return 0;
}
