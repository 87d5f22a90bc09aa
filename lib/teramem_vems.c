/* teramem_vems.c: the vems backend's region (formica/teramem_vems.h): the
 * tier asked whether it is attached and how large its disk is, a file
 * /vems.PID written once to the region's size (its blocks allocated),
 * mapped MAP_SHARED, so every page is an NVM line of the tier lent into
 * the process, and unlinked at once (the mapping keeps it, and ends it
 * however the process ends); at the end the tier's counters and munmap. */
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/protocol/blk.h>
#include <formica/request.h>
#include <formica/teramem_vems.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ZERO_PIECE_BYTES (256u << 10)

static struct {
    bool open;
    int fd;
    void *base;
    uint64_t bytes;
    char path[32];
    struct blk_tier_report at_open;
} vems;

/* BLK's tier report into *report: 0 or the error. */
static long ask_tier(struct blk_tier_report *report)
{
    long blk = server_wait_for(SERVER_NAME_BLK, SERVER_START_WAIT_MS);
    long control = blk < 0 ? blk : ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0)
        return control;
    long result = request_operation(blk, (uint64_t)control, BLK_TIER_REPORT);
    if (result == 0)
        memcpy(report, ica_control_of((uint64_t)control)->payload, sizeof *report);
    ica_free((uint64_t)control);
    return result;
}

/* The file written from its start to `bytes` with zeros, so FS allocates
 * every block now (a disk that cannot hold it refuses here, not in a fault). */
static long allocate_file(int fd, uint64_t bytes)
{
    uint8_t *zeros = calloc(1, ZERO_PIECE_BYTES);
    if (zeros == NULL)
        return -E_NO_MEMORY;
    long result = 0;
    for (uint64_t done = 0; done < bytes && result >= 0; done += ZERO_PIECE_BYTES) {
        uint64_t piece = bytes - done < ZERO_PIECE_BYTES ? bytes - done : ZERO_PIECE_BYTES;
        result = pwrite(fd, zeros, piece, done);
        if (result >= 0 && (uint64_t)result != piece)
            result = -E_NO_SPACE;
    }
    free(zeros);
    return result < 0 ? result : 0;
}

static long refuse(long error, uint64_t bytes, const char *what)
{
    printf("teramem: vems region of %lu KiB refused: %s: %s\n", (unsigned long)(bytes >> 10), what,
           error_text(error));
    if (vems.fd >= 0) {
        close(vems.fd);
        unlink(vems.path);
    }
    vems.fd = -1;
    return error;
}

long teramem_vems_open(uint64_t bytes, uint64_t *base)
{
    char why[200];
    vems.fd = -1;
    long error = ask_tier(&vems.at_open);
    if (error < 0)
        return refuse(error, bytes, "no report from BLK's tier");
    error = teramem_vems_check(&vems.at_open, bytes, why, sizeof why);
    if (error < 0) {
        printf("teramem: %s\n", why);
        return error;
    }
    snprintf(vems.path, sizeof vems.path, "/vems.%ld", process_id());
    vems.fd = open(vems.path, O_RDWR | O_CREAT | O_TRUNC);
    if (vems.fd < 0)
        return refuse(vems.fd, bytes, vems.path);
    error = allocate_file(vems.fd, bytes);
    if (error < 0)
        return refuse(error, bytes, "its file's blocks on the disk");
    void *mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, vems.fd, 0);
    if (mapped == MAP_FAILED)
        return refuse(mmap_error(), bytes, "the mapping");
    close(vems.fd);    /* the mapping holds a handle of its own (FS_MAP) */
    unlink(vems.path); /* its blocks freed when the mapping ends, even if the process crashes */
    vems.fd = -1;
    vems.base = mapped;
    vems.bytes = bytes;
    vems.open = true;
    *base = (uint64_t)mapped;
    printf("teramem: vems region of %lu KiB: %s mapped through the tier (%lu KiB of NVM, a "
           "device of %lu KiB)\n",
           (unsigned long)(bytes >> 10), vems.path, (unsigned long)(vems.at_open.nvm_bytes >> 10),
           (unsigned long)(vems.at_open.disk_bytes >> 10));
    return 0;
}

long teramem_vems_stats(struct teramem_stats *stats)
{
    struct blk_tier_report now;
    if (!vems.open)
        return -E_INVALID;
    long error = ask_tier(&now);
    if (error < 0)
        return error;
    teramem_vems_counters(&vems.at_open, &now, stats);
    return 0;
}

long teramem_vems_close(void)
{
    if (!vems.open)
        return -E_INVALID;
    struct teramem_stats stats = {0};
    struct blk_tier_report now = {0};
    long error = ask_tier(&now);
    if (error == 0)
        teramem_vems_counters(&vems.at_open, &now, &stats);
    printf("@json {\"kind\":\"vems_region\",\"bytes\":%lu,\"disk_bytes\":%lu,\"nvm_bytes\":%lu,"
           "\"swap_in_blocks\":%lu,\"swap_out_blocks\":%lu,\"tier_hits\":%lu,"
           "\"tier_misses\":%lu,\"tier_bypasses\":%lu,\"writeback_bytes\":%lu,"
           "\"direct_lends\":%lu,\"mapped_evictions\":%lu}\n",
           vems.bytes, now.disk_bytes, now.nvm_bytes, stats.swap_in_blocks, stats.swap_out_blocks,
           now.hits - vems.at_open.hits, now.misses - vems.at_open.misses,
           now.bypasses - vems.at_open.bypasses, stats.bytes_out,
           now.direct_lends - vems.at_open.direct_lends,
           now.mapped_evictions - vems.at_open.mapped_evictions);
    long unmapped = munmap(vems.base, vems.bytes); /* the file's last handle: FS frees it */
    vems = (typeof(vems)){.fd = -1};
    return unmapped < 0 ? unmapped : error;
}
