/* fair_share.c: attacks on the servers' shared capacity, and the ordinary
 * program they must not stop. `hostile handles HOLD_MS` spawns holders in
 * its own account that take every FS handle they can get (the account's
 * share stops them, -E_QUOTA) and hold them; `hostile fill PATH [MARK]`
 * writes until the disk refuses (its owner's quota, or the full disk);
 * `hostile normal ROUNDS` writes, reads back, lists and removes a file and
 * reports its time; `hostile swapper MARK` keeps a disk-backed pager region
 * busy across a full disk; `hostile newregion` asks for a disk-backed
 * region once the disk is full (refused: -E_NO_SPACE); `hostile await
 * MARK [BYTES]` waits until the file MARK exists (with BYTES at least). */
#include "hostile.h"
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/teramem.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define HOLDERS 6                /* 6 x 128 handles: more than an account's 512 */
#define HANDLE_FILE "/hello.txt" /* any file the attacker may read */
#define SERVER_WAIT_MS 30000
#define FILL_CHUNK (64u << 10)
#define NORMAL_BYTES (64u << 10)
#define NORMAL_CHUNK (16u << 10)
#define SWAPPER_BYTES (2u << 20)
#define SWAPPER_LIMIT (128u << 10)
#define SWAPPER_BLOCK (16u << 10)
#define MARK_POLL_MS 200
#define MARK_WAIT_MS 300000

int take_all_handles(uint64_t hold_ms)
{
    char arguments[32];
    snprintf(arguments, sizeof arguments, "holder %lu", (unsigned long)hold_ms);
    long holders[HOLDERS];
    for (int i = 0; i < HOLDERS; i++)
        holders[i] = spawn("hostile", arguments, CORE_ANY, PRIORITY_APPLICATION);
    for (int i = 0; i < HOLDERS; i++) {
        int code = -1;
        if (holders[i] > 0)
            wait_process(holders[i], &code);
    }
    return 0;
}

/* One raw FS_OPEN (the library keeps only 32 descriptors a process). */
static long open_handle(long fs, uint64_t control)
{
    request_prepare(control, FS_OPEN);
    struct ica_control *page = ica_control_of(control);
    *fs_open_of(page) = (struct fs_open_message){.flags = FS_OPEN_READ};
    memcpy(page->payload, HANDLE_FILE, sizeof HANDLE_FILE);
    return request_call(fs, control);
}

int hold_handles(uint64_t hold_ms)
{
    long fs = server_wait_for(SERVER_NAME_FS, SERVER_WAIT_MS);
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    long result = fs < 0 ? fs : control;
    uint32_t opened = 0;
    while (result >= 0 && (result = open_handle(fs, (uint64_t)control)) >= 0)
        opened++;
    printf("@json {\"kind\":\"hostile_handles\",\"pid\":%ld,\"opened\":%u,\"error\":%ld}\n",
           process_id(), opened, result);
    fflush_console();
    sleep_ms(hold_ms);
    return 0;
}

int fill_disk(const char *path, const char *mark)
{
    static uint8_t chunk[FILL_CHUNK];
    memset(chunk, 'f', sizeof chunk);
    uint64_t start = clock_microseconds(), bytes = 0;
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY);
    long result = fd;
    while (result >= 0 && (result = write(fd, chunk, sizeof chunk)) == (long)sizeof chunk)
        bytes += sizeof chunk;
    if (result >= 0) { /* a short write: the next one says why */
        bytes += (uint64_t)result;
        result = write(fd, chunk, sizeof chunk);
    }
    if (fd >= 0)
        close(fd);
    printf("@json {\"kind\":\"hostile_fill\",\"path\":\"%s\",\"bytes\":%lu,\"error\":%ld,"
           "\"elapsed_ms\":%lu}\n",
           path, (unsigned long)bytes, result,
           (unsigned long)((clock_microseconds() - start) / 1000));
    expect("fill_stopped_with_no_space", result, -E_NO_SPACE);
    if (mark != NULL) {
        int marker = open(mark, O_CREAT | O_WRONLY);
        expect("fill_mark_made", marker < 0 ? marker : close(marker), 0);
    }
    return hostile_failures() == 0 ? 0 : 1;
}

static bool one_round(const char *path, uint8_t *buffer, uint8_t seed)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR);
    if (fd < 0)
        return false;
    bool ok = true;
    for (uint32_t offset = 0; ok && offset < NORMAL_BYTES; offset += NORMAL_CHUNK) {
        memset(buffer, seed + offset / NORMAL_CHUNK, NORMAL_CHUNK);
        ok = write(fd, buffer, NORMAL_CHUNK) == NORMAL_CHUNK;
    }
    for (uint32_t offset = 0; ok && offset < NORMAL_BYTES; offset += NORMAL_CHUNK)
        ok = pread(fd, buffer, NORMAL_CHUNK, offset) == NORMAL_CHUNK &&
             buffer[0] == (uint8_t)(seed + offset / NORMAL_CHUNK) &&
             buffer[NORMAL_CHUNK - 1] == buffer[0];
    close(fd);
    int directory = opendir("/");
    struct directory_entry entry;
    ok = ok && directory >= 0 && readdir(directory, &entry) > 0;
    if (directory >= 0)
        closedir(directory);
    return unlink(path) == 0 && ok;
}

int normal_program(uint32_t rounds)
{
    static uint8_t buffer[NORMAL_CHUNK];
    char path[48];
    snprintf(path, sizeof path, "/normal.%ld", process_id());
    uint64_t start = clock_microseconds();
    bool ok = true;
    for (uint32_t round = 0; ok && round < rounds; round++)
        ok = one_round(path, buffer, (uint8_t)round);
    printf("@json {\"kind\":\"hostile_normal\",\"rounds\":%u,\"ok\":%s,\"elapsed_ms\":%lu}\n",
           rounds, ok ? "true" : "false", (unsigned long)((clock_microseconds() - start) / 1000));
    return ok ? 0 : 1;
}

static uint8_t swapped_byte(uint64_t offset)
{
    return (uint8_t)((offset >> 12) * 13 + 5);
}

static void touch_pages(uint8_t *buffer, uint64_t from, uint64_t to)
{
    for (uint64_t offset = from; offset < to; offset += 4096)
        buffer[offset] = swapped_byte(offset);
}

/* Whether the file `mark` exists and holds at least `bytes`. */
static bool mark_reached(const char *mark, uint64_t bytes)
{
    struct file_status status;
    return stat(mark, &status) == 0 && status.size >= bytes;
}

/* Waits (polling) until the file `mark` exists with at least `bytes`; the
 * milliseconds waited. */
static uint64_t wait_for_mark(const char *mark, uint64_t bytes)
{
    uint64_t waited = 0;
    while (!mark_reached(mark, bytes) && waited < MARK_WAIT_MS) {
        sleep_ms(MARK_POLL_MS);
        waited += MARK_POLL_MS;
    }
    return waited;
}

int await_mark(const char *mark, uint64_t bytes)
{
    wait_for_mark(mark, bytes);
    return mark_reached(mark, bytes) ? 0 : 1;
}

int new_region_on_full_disk(void)
{
    struct teramem_options options = {.local_limit_bytes = SWAPPER_LIMIT,
                                      .block_bytes = SWAPPER_BLOCK,
                                      .backend = PAGER_BACKEND_DISK,
                                      .capacity_bytes = SWAPPER_BYTES};
    long attached = teramem_init(&options);
    if (attached >= 0)
        teramem_cleanup();
    expect("new_region_on_full_disk", attached, -E_NO_SPACE);
    return hostile_failures() == 0 ? 0 : 1;
}

int swap_across_full_disk(const char *mark)
{
    struct teramem_options options = {.local_limit_bytes = SWAPPER_LIMIT,
                                      .block_bytes = SWAPPER_BLOCK,
                                      .backend = PAGER_BACKEND_DISK,
                                      .capacity_bytes = SWAPPER_BYTES};
    long attached = teramem_init(&options);
    uint8_t *buffer = attached < 0 ? NULL : teramalloc(SWAPPER_BYTES);
    if (buffer == NULL) {
        expect("swapper_region", attached < 0 ? attached : -E_NO_MEMORY, 0);
        return 1;
    }
    /* The first half is stored now; the second's first stores come after the disk filled. */
    touch_pages(buffer, 0, SWAPPER_BYTES / 2);
    printf("@json {\"kind\":\"hostile_swapper\",\"phase\":\"first half\"}\n");
    fflush_console();
    uint64_t waited = wait_for_mark(mark, 0);
    touch_pages(buffer, SWAPPER_BYTES / 2, SWAPPER_BYTES);
    uint64_t wrong = 0;
    for (uint64_t offset = 0; offset < SWAPPER_BYTES; offset += 4096)
        wrong += buffer[offset] != swapped_byte(offset);
    struct teramem_stats stats;
    teramem_stats(&stats);
    printf("@json {\"kind\":\"hostile_swapper\",\"phase\":\"done\",\"waited_ms\":%lu,"
           "\"wrong_pages\":%lu,\"swap_out_blocks\":%lu,\"swap_in_blocks\":%lu}\n",
           (unsigned long)waited, (unsigned long)wrong, (unsigned long)stats.swap_out_blocks,
           (unsigned long)stats.swap_in_blocks);
    teramem_cleanup();
    expect("swapper_survived_full_disk", (long)wrong, 0);
    return wrong == 0 ? 0 : 1;
}
