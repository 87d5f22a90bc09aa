/* backend_disk.c: the local-disk baseline: blocks go to the file /swap on the
 * ext2 disk through FS (FS_WRITE asynchronously with the data ICA attached,
 * FS_READ synchronously into a fresh data ICA); first-free placement. The
 * file holds 40 MiB, or the kernel option pager_swap_mib=N (swap_size.h). */
#include "backend_internal.h"
#include "pager.h"
#include "promised_space.h"
#include "swap_size.h"
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <formica/users.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SWAP_PATH "/swap"
#define SWAP_OPTION "pager_swap_mib"
#define UNITS_PER_MIB ((1u << 20) / PAGER_UNIT_BYTES)
#define NO_CONTROL 0
#define FS_RESTART_WAIT_MS 10000
#define ZERO_CHUNK_BYTES (1u << 20) /* the swap file grows by at most this per write */

struct pending_store {
    uint64_t control; /* NO_CONTROL: free */
    struct client *client;
    uint32_t block;
};

static struct {
    bool opened;
    long fs;
    uint64_t handle;       /* the swap file, as FS_OPEN answered */
    uint64_t sync_control; /* for FS_OPEN and FS_READ */
    uint64_t idle_controls[PAGER_MAX_IN_FLIGHT_STORES];
    uint32_t idle_count;
    struct pending_store pending[PAGER_MAX_IN_FLIGHT_STORES];
    uint32_t pending_count;
    uint32_t units;             /* the swap file's size in units: swap_units() */
    uint64_t *bits;             /* (units + 63) / 64 words, from the first open */
    struct promised_space room; /* first-free units, promised to the attached clients */
    uint32_t backed_units;      /* the swap file's first units, written: their blocks allocated */
} disk;

/* The swap file's size in units: pager_swap_mib=N, read once; a value that
 * is not 1..SWAP_MOST_MIB is logged and the default taken. */
static uint32_t swap_units(void)
{
    if (disk.units != 0)
        return disk.units;
    uint32_t mib = SWAP_DEFAULT_MIB;
    char value[24];
    long length = kernel_option(SWAP_OPTION, value, sizeof value);
    long error = length == -E_TOO_BIG ? -E_TOO_BIG : 0;
    if (length >= 0)
        error = swap_size_parse(value, &mib);
    if (error != 0)
        printf("pager: %s=%s is not a size in MiB of 1..%u (%s): %s holds %u MiB\n", SWAP_OPTION,
               length >= 0 ? value : "(too long)", SWAP_MOST_MIB, error_text(error), SWAP_PATH,
               mib);
    else if (length >= 0)
        printf("pager: %s holds %u MiB (%s)\n", SWAP_PATH, mib, SWAP_OPTION);
    disk.units = mib * UNITS_PER_MIB;
    return disk.units;
}

/* The swap file holds clients' memory: it must be the pager's own and
 * nobody else's to read (a file another user made at SWAP_PATH first is
 * refused, not used). */
static long check_swap_owner(uint64_t handle)
{
    struct ica_control *page = ica_control_of(disk.sync_control);
    request_prepare(disk.sync_control, FS_STAT);
    page->payload[0] = '\0';
    fs_stat_of(page)->handle = handle;
    long error = ica_request(disk.fs, disk.sync_control, ICA_SYNC);
    if (error == 0)
        error = page->result;
    if (error < 0)
        return error;
    const struct fs_stat_message *stat = fs_stat_of(page);
    if (stat->uid != USER_PAGER || (stat->mode & 077u) != 0) {
        printf("pager: %s belongs to uid %u with mode %o, not to the pager alone: not used\n",
               SWAP_PATH, stat->uid, stat->mode & 07777u);
        return -E_PERMISSION;
    }
    uint64_t units = stat->size / PAGER_UNIT_BYTES; /* written from the start, without holes */
    disk.backed_units = units < disk.units ? (uint32_t)units : disk.units;
    return 0;
}

/* The free-unit bitmap for swap_units() units, made once. */
static long make_bitmap(void)
{
    if (disk.bits == NULL)
        disk.bits = malloc(((swap_units() + 63) / 64) * sizeof(uint64_t));
    if (disk.bits != NULL)
        return 0;
    printf("pager: no memory for %s's bitmap of %u units\n", SWAP_PATH, disk.units);
    return -E_NO_MEMORY;
}

static long open_swap_file(bool truncate)
{
    long made = make_bitmap();
    if (made != 0)
        return made;
    disk.fs = server_wait_for(SERVER_NAME_FS, FS_RESTART_WAIT_MS); /* FS may still be mounting */
    long control = disk.fs < 0 ? disk.fs : ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0) {
        printf("pager: no file server for the disk backend (%s)\n", error_text(control));
        return control;
    }
    disk.sync_control = (uint64_t)control;
    request_prepare(disk.sync_control, FS_OPEN);
    struct ica_control *page = ica_control_of(disk.sync_control);
    fs_open_of(page)->flags =
        FS_OPEN_CREATE | (truncate ? FS_OPEN_TRUNCATE : 0) | FS_OPEN_READ | FS_OPEN_WRITE;
    fs_open_of(page)->permissions = 0600;
    strncpy((char *)page->payload, SWAP_PATH, ICA_PAYLOAD_BYTES - 1);
    long error = ica_request(disk.fs, disk.sync_control, ICA_SYNC);
    long handle = error != 0 ? error : page->result;
    if (handle >= 0 && (error = check_swap_owner((uint64_t)handle)) < 0)
        handle = error;
    if (handle < 0) {
        printf("pager: cannot open %s: %s\n", SWAP_PATH, error_text(handle));
        return handle;
    }
    disk.handle = (uint64_t)handle;
    space_init(&disk.room.space, disk.bits, disk.units);
    disk.opened = true;
    return 0;
}

static long disk_fits(const struct client *client)
{
    long error = disk.opened ? 0 : open_swap_file(true);
    return error != 0 ? error : promised_space_fits(&disk.room, client, "swap file");
}

static uint64_t disk_capacity_bytes(void)
{
    return (uint64_t)swap_units() * PAGER_UNIT_BYTES;
}

/* Sends `control` to FS; when FS has ended since (init restarts it, and
 * the restarted FS keeps the swap file's handle), to the new FS. */
static long send_to_fs(uint64_t control, uint32_t flags)
{
    long error = ica_request(disk.fs, control, flags);
    if (error != -E_NOT_FOUND || !ica_held(control))
        return error;
    long fs = server_wait_for(SERVER_NAME_FS, FS_RESTART_WAIT_MS);
    if (fs < 0)
        return error;
    printf("pager: the file server is now pid %ld\n", fs);
    disk.fs = fs;
    return ica_request(disk.fs, control, flags);
}

/* The prepared sync_control sent asynchronously and collected with any
 * result: stores finishing meanwhile are completed as they come (swap-in
 * overlaps swap-out). A synchronous request would spin in the kernel while
 * another result waits. The request's result or the exchange's error. */
static long exchange(void)
{
    ica_control_of(disk.sync_control)->tag = PAGER_MAX_IN_FLIGHT_STORES; /* not a store */
    long error = send_to_fs(disk.sync_control, 0);
    while (error == 0) {
        long control = ica_collect(0);
        if (control < 0)
            return control;
        if ((uint64_t)control == disk.sync_control)
            break;
        backend_result_arrived((uint64_t)control);
    }
    return error != 0 ? error : ica_control_of(disk.sync_control)->result;
}

/* Writes zeros from the swap file's written end up to `target` units with
 * the data ICA `zeros` (ZERO_CHUNK_BYTES of them). */
static long write_zeros(uint32_t target, uint64_t zeros)
{
    while (disk.backed_units < target) {
        uint32_t units = target - disk.backed_units;
        if (units > ZERO_CHUNK_BYTES / PAGER_UNIT_BYTES)
            units = ZERO_CHUNK_BYTES / PAGER_UNIT_BYTES;
        uint64_t bytes = (uint64_t)units * PAGER_UNIT_BYTES;
        request_prepare(disk.sync_control, FS_WRITE);
        *fs_write_of(ica_control_of(disk.sync_control)) = (struct fs_write_message){
            disk.handle, (uint64_t)disk.backed_units * PAGER_UNIT_BYTES, bytes};
        request_attach(disk.sync_control, zeros);
        long written = exchange();
        if (written > 0)
            disk.backed_units += (uint32_t)((uint64_t)written / PAGER_UNIT_BYTES);
        if (written != (long)bytes)
            return written < 0 ? written : -E_NO_SPACE;
    }
    return 0;
}

/* Extends the swap file's written part to `target` units with zeros, so
 * that FS has allocated their disk blocks before any store needs them: a
 * disk that fills later cannot fail a store. 0, or the write's error
 * (-E_NO_SPACE when the disk or the pager's room on it is full). */
static long back_units(uint32_t target)
{
    if (target > disk.units)
        target = disk.units;
    if (disk.backed_units >= target)
        return 0;
    long zeros = ica_allocate(ICA_KIND_DATA, ZERO_CHUNK_BYTES);
    if (zeros < 0)
        return zeros;
    memset(ica_address((uint64_t)zeros), 0, ZERO_CHUNK_BYTES); /* a pooled ICA keeps its bytes */
    long error = write_zeros(target, (uint64_t)zeros);
    ica_free((uint64_t)zeros);
    return error;
}

/* The units a store may place into: those placed and those promised
 * (first-free placement fills from the start). */
static uint32_t units_in_play(void)
{
    uint64_t used = disk.units - space_free_units(&disk.room.space);
    uint64_t units = used + disk.room.promised_units;
    return units < disk.units ? (uint32_t)units : disk.units;
}

/* A new region: its whole size promised in the swap file and the file's
 * disk blocks allocated for it now, so a full disk refuses the region
 * instead of failing its stores later. */
static long disk_attach(struct client *client)
{
    long error = disk.opened ? 0 : open_swap_file(true);
    if (error == 0)
        error = promised_space_reserve(&disk.room, client, "swap file");
    if (error != 0)
        return error;
    error = back_units(units_in_play());
    if (error == 0)
        return 0;
    printf("pager: no disk space for pid %u's %lu KiB region in %s (%s): refused\n", client->pid,
           client->bytes >> 10, SWAP_PATH, error_text(error));
    promised_space_release(&disk.room, client);
    return error == -E_NO_SPACE || error == -E_QUOTA ? -E_NO_SPACE : error;
}

static long take_control(void)
{
    if (disk.idle_count > 0)
        return (long)disk.idle_controls[--disk.idle_count];
    return ica_allocate(ICA_KIND_CONTROL, 4096);
}

static void prepare_transfer(uint64_t control, uint32_t operation, const struct client *client,
                             uint32_t block, uint64_t data_ica)
{
    request_prepare(control, operation);
    struct ica_control *page = ica_control_of(control);
    uint64_t offset = (uint64_t)client->slot[block] * PAGER_UNIT_BYTES;
    if (operation == FS_READ)
        *fs_read_of(page) = (struct fs_read_message){disk.handle, offset, client->block_bytes};
    else
        *fs_write_of(page) = (struct fs_write_message){disk.handle, offset, client->block_bytes};
    request_attach(control, data_ica);
}

static long remember_store(uint64_t control, struct client *client, uint32_t block)
{
    for (uint32_t i = 0; i < PAGER_MAX_IN_FLIGHT_STORES; i++) {
        if (disk.pending[i].control != NO_CONTROL)
            continue;
        disk.pending[i] = (struct pending_store){control, client, block};
        disk.pending_count++;
        ica_control_of(control)->tag = i;
        return 0;
    }
    return -E_BUSY;
}

static long disk_store(struct client *client, uint32_t block, uint64_t data_ica)
{
    uint32_t unit = promised_space_place(&disk.room, client, block);
    if (unit == PAGER_NO_SLOT)
        return -E_NO_SPACE;
    /* A block placed past the written units (a fragmented file) grows it first. */
    long backed = back_units(unit + client->block_bytes / PAGER_UNIT_BYTES);
    if (backed != 0)
        return backed;
    long control = take_control();
    if (control < 0)
        return control;
    prepare_transfer((uint64_t)control, FS_WRITE, client, block, data_ica);
    long error = remember_store((uint64_t)control, client, block);
    bool remembered = error == 0;
    while (error == 0 && (error = send_to_fs((uint64_t)control, 0)) == -E_BUSY)
        if (backend_disk.wait_one() != 0)
            break; /* the ring is full of other processes' requests: retry */
    if (error == 0)
        return 0;
    if (remembered) {
        disk.pending[ica_control_of((uint64_t)control)->tag].control = NO_CONTROL;
        disk.pending_count--;
    }
    ica_control_of((uint64_t)control)->data_count = 0; /* the caller keeps the data ICA */
    disk.idle_controls[disk.idle_count++] = (uint64_t)control;
    return error;
}

bool disk_take_result(uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    uint64_t index = page->tag;
    if (index >= PAGER_MAX_IN_FLIGHT_STORES || disk.pending[index].control != control)
        return false;
    struct pending_store store = disk.pending[index];
    disk.pending[index].control = NO_CONTROL;
    disk.pending_count--;
    for (uint32_t i = 0; i < page->data_count; i++)
        ica_free(page->data[i]);
    long result = page->result == (int64_t)store.client->block_bytes ? 0 : -E_IO;
    if (result != 0)
        printf("pager: disk store of block %u failed: %s\n", store.block,
               error_text(page->result < 0 ? page->result : -E_IO));
    disk.idle_controls[disk.idle_count++] = control;
    store_completed(store.client, store.block, result);
    return true;
}

static long disk_retrieve(struct client *client, uint32_t block, uint64_t data_ica)
{
    prepare_transfer(disk.sync_control, FS_READ, client, block, data_ica);
    long result = exchange();
    if (result == (long)client->block_bytes)
        return 0;
    return result < 0 ? result : -E_IO;
}

static long disk_wait_one(void)
{
    if (disk.pending_count == 0)
        return -E_NOT_FOUND;
    long control = ica_collect(0);
    if (control < 0)
        return control;
    backend_result_arrived((uint64_t)control);
    return 0;
}

static void disk_detach(struct client *client, bool keep_contents)
{
    (void)keep_contents; /* the swap file does not outlive the boot */
    promised_space_release(&disk.room, client);
}

/* A kept client after a pager restart: the swap file as it is (not
 * truncated), its placed blocks marked used, the rest of its region promised. */
static long disk_reattach(struct client *client)
{
    long error = disk.opened ? 0 : open_swap_file(false);
    if (error == 0)
        error = promised_space_take_back(&disk.room, client);
    if (error == 0 && (error = back_units(units_in_play())) != 0) {
        printf("pager: %s could not grow for pid %u's region (%s): its stores may fail\n",
               SWAP_PATH, client->pid, error_text(error));
        error = 0; /* a running program is not ended for it */
    }
    return error;
}

const struct backend backend_disk = {
    .name = "disk",
    .kind = PAGER_BACKEND_DISK,
    .fits = disk_fits,
    .capacity_bytes = disk_capacity_bytes,
    .attach = disk_attach,
    .store = disk_store,
    .retrieve = disk_retrieve,
    .wait_one = disk_wait_one,
    .detach = disk_detach,
    .reattach = disk_reattach,
};
