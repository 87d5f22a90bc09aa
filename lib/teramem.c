/* teramem.c: the Teramem library (seed 004 §3.5, §4.2): teramem_init reserves
 * a pager region and registers it; teramalloc/terafree are a first-fit
 * allocator over it whose bookkeeping lives in the local heap, so they make
 * no system call and touch no pager memory. */
#include <formica/request.h>
#include <formica/teramem.h>
#include <formica/teramem_vems.h>
#include <formica/user.h>
#include <stdio.h>
#include <formica/size.h>
#include <stdlib.h>
#include <string.h>

#define ALIGNMENT 64u
#define EXTENTS 4096u /* free and allocated pieces tracked at once */
#define PAGER_CALL_RETRIES 3
#define PAGER_RESTART_WAIT_MS 30000

struct extent {
    uint64_t start, bytes;
};

static struct {
    bool ready;
    long pager;
    uint64_t control;
    uint64_t base, capacity;
    uint32_t backend;
    struct extent *free_list; /* sorted by address, merged */
    uint32_t free_count;
    struct extent *used_list; /* sorted by address */
    uint32_t used_count;
} tm;

static void apply_defaults(struct teramem_options *o)
{
    if (o->local_limit_bytes == 0)
        o->local_limit_bytes = TERAMEM_DEFAULT_LIMIT;
    if (o->block_bytes == 0)
        o->block_bytes = TERAMEM_DEFAULT_BLOCK;
    if (o->policy == 0)
        o->policy = PAGER_POLICY_LRU;
    if (o->backend == 0)
        o->backend = PAGER_BACKEND_DISK;
    if (o->capacity_bytes == 0)
        o->capacity_bytes = TERAMEM_DEFAULT_CAPACITY;
    o->capacity_bytes = (o->capacity_bytes + o->block_bytes - 1) / o->block_bytes * o->block_bytes;
}

/* The pager's typed message in tm.control, prepared for `operation`. */
static void *pager_message(uint32_t operation)
{
    request_prepare(tm.control, operation);
    return ica_control_of(tm.control)->message;
}

/* The request in tm.control to the pager; a pager that ended before
 * answering is replaced by the restarted one (it kept the block tables) and
 * the same message is sent again. */
static long pager_call(void)
{
    struct ica_control *page = ica_control_of(tm.control);
    uint32_t operation = page->operation;
    uint8_t message[ICA_MESSAGE_BYTES];
    memcpy(message, page->message, sizeof(message));
    long result = request_call(tm.pager, tm.control);
    for (int retry = 0; retry < PAGER_CALL_RETRIES; retry++) {
        if (result != -E_SERVER_ENDED && result != -E_NOT_FOUND)
            break;
        long pager = server_wait_for(SERVER_NAME_PAGER, PAGER_RESTART_WAIT_MS);
        if (pager < 0 || pager == tm.pager)
            break;
        tm.pager = pager;
        request_prepare(tm.control, operation);
        memcpy(page->message, message, sizeof(message));
        result = request_call(tm.pager, tm.control);
    }
    return result;
}

static long register_region(const struct teramem_options *o)
{
    struct pager_init_message *message = pager_message(PAGER_INIT);
    *message = (struct pager_init_message){
        .base = tm.base,
        .bytes = o->capacity_bytes,
        .limit_bytes = o->local_limit_bytes,
        .block_bytes = o->block_bytes,
        .policy = o->policy,
        .backend = o->backend,
        .replicas = o->replicas,
        .inflight_bytes = o->inflight_bytes,
        .persistent_key = o->persistent_key,
    };
    return request_call(tm.pager, tm.control);
}

static long allocator_start(void)
{
    tm.free_list = malloc(EXTENTS * sizeof(struct extent));
    tm.used_list = malloc(EXTENTS * sizeof(struct extent));
    if (tm.free_list == NULL || tm.used_list == NULL)
        return -E_NO_MEMORY;
    tm.free_list[0] = (struct extent){tm.base, tm.capacity};
    tm.free_count = 1;
    tm.used_count = 0;
    return 0;
}

static void allocator_stop(void)
{
    free(tm.free_list);
    free(tm.used_list);
    tm.free_list = tm.used_list = NULL;
}

static void undo_init(void)
{
    syscall6(SYS_PAGER_RELEASE, 0, 0, 0, 0, 0, 0);
    ica_free(tm.control);
    allocator_stop();
}

/* One attempt at teramem_init's work with the pager registered now: the
 * region reserved in the kernel and registered with the pager. */
static long attach_region(const struct teramem_options *o)
{
    tm.pager = server_wait_for(SERVER_NAME_PAGER, SERVER_START_WAIT_MS);
    long control = tm.pager < 0 ? tm.pager : ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0) {
        printf("teramem: no pager server: %s\n", error_text(control));
        return control;
    }
    tm.control = (uint64_t)control;
    long base = syscall6(SYS_PAGER_REGION, tm.pager, (long)o->capacity_bytes, 0, 0, 0, 0);
    if (base < 0) {
        printf("teramem: no pager region of %lu bytes: %s\n", o->capacity_bytes, error_text(base));
        ica_free(tm.control);
        return base;
    }
    tm.base = (uint64_t)base;
    tm.capacity = o->capacity_bytes;
    long result = allocator_start();
    if (result == 0)
        result = register_region(o);
    if (result < 0)
        undo_init();
    return result;
}

/* A pager that ended while the region was being set up (-E_SERVER_ENDED, or
 * -E_NOT_FOUND for a pid already gone, and "pager" no longer names it) had
 * taken nothing of it: the whole set-up is done again with the restarted
 * pager (docs/recovery.md). A live pager's own refusal is its answer. */
static bool pager_ended(long result)
{
    if (result != -E_SERVER_ENDED && result != -E_NOT_FOUND)
        return false;
    if (server_lookup(SERVER_NAME_PAGER) == tm.pager)
        return false;
    printf("teramem: the pager (pid %ld) ended while the region was set up: again with the "
           "restarted one\n",
           tm.pager);
    return true;
}

/* The vems backend: no pager, the region a file mapped through BLK's tier. */
static long attach_vems_region(const struct teramem_options *o)
{
    uint64_t base = 0;
    long result = teramem_vems_open(o->capacity_bytes, &base);
    if (result < 0)
        return result;
    tm.base = base;
    tm.capacity = o->capacity_bytes;
    result = allocator_start();
    if (result < 0) {
        teramem_vems_close();
        allocator_stop();
    }
    return result;
}

long teramem_init(const struct teramem_options *options)
{
    struct teramem_options o = options != NULL ? *options : (struct teramem_options){0};
    apply_defaults(&o);
    if (tm.ready)
        return -E_BUSY;
    if (o.backend == PAGER_BACKEND_VEMS) {
        long made = attach_vems_region(&o);
        tm.backend = o.backend;
        tm.ready = made == 0;
        return made;
    }
    long result = attach_region(&o);
    for (int retry = 0; retry < PAGER_CALL_RETRIES && pager_ended(result); retry++)
        result = attach_region(&o);
    if (result < 0) {
        printf("teramem: the pager refused the region (%s backend, %lu KiB, %u replica(s)): %s\n",
               teramem_backend_name(o.backend), o.capacity_bytes >> 10, o.replicas ? o.replicas : 1,
               error_text(result));
        return result;
    }
    tm.backend = o.backend;
    tm.ready = true;
    return result;
}

long teramem_cleanup(void)
{
    if (!tm.ready)
        return -E_INVALID;
    if (tm.backend == PAGER_BACKEND_VEMS) {
        long closed = teramem_vems_close();
        allocator_stop();
        tm.ready = false;
        return closed;
    }
    pager_message(PAGER_CLEANUP);
    long result = pager_call();
    undo_init();
    tm.ready = false;
    return result;
}

/* Removes entry `index` of a list, or makes room at it. */
static void list_remove(struct extent *list, uint32_t *count, uint32_t index)
{
    memmove(&list[index], &list[index + 1], (*count - index - 1) * sizeof(struct extent));
    (*count)--;
}

static bool list_insert(struct extent *list, uint32_t *count, uint32_t index, struct extent item)
{
    if (*count >= EXTENTS)
        return false;
    memmove(&list[index + 1], &list[index], (*count - index) * sizeof(struct extent));
    list[index] = item;
    (*count)++;
    return true;
}

/* First index whose start is >= start (binary search). */
static uint32_t list_position(const struct extent *list, uint32_t count, uint64_t start)
{
    uint32_t low = 0, high = count;
    while (low < high) {
        uint32_t middle = (low + high) / 2;
        if (list[middle].start < start)
            low = middle + 1;
        else
            high = middle;
    }
    return low;
}

static uint64_t largest_free(void)
{
    uint64_t largest = 0;
    for (uint32_t i = 0; i < tm.free_count; i++)
        if (tm.free_list[i].bytes > largest)
            largest = tm.free_list[i].bytes;
    return largest;
}

void *teramalloc(size_t bytes)
{
    if (!tm.ready || bytes == 0)
        return NULL;
    uint64_t size = (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    for (uint32_t i = 0; i < tm.free_count; i++) {
        struct extent *piece = &tm.free_list[i];
        if (piece->bytes < size)
            continue;
        struct extent taken = {piece->start, size};
        uint32_t at = list_position(tm.used_list, tm.used_count, taken.start);
        if (!list_insert(tm.used_list, &tm.used_count, at, taken))
            break;
        piece->start += size;
        piece->bytes -= size;
        if (piece->bytes == 0)
            list_remove(tm.free_list, &tm.free_count, i);
        return (void *)taken.start;
    }
    printf("teramalloc: %lu bytes do not fit (region %lu bytes, largest free piece %lu)\n",
           (uint64_t)bytes, tm.capacity, largest_free());
    return NULL;
}

/* Puts a piece back at its place and merges it with its neighbours. */
static void free_list_add(struct extent piece)
{
    uint32_t at = list_position(tm.free_list, tm.free_count, piece.start);
    if (at > 0 && tm.free_list[at - 1].start + tm.free_list[at - 1].bytes == piece.start) {
        tm.free_list[at - 1].bytes += piece.bytes;
        if (at < tm.free_count && piece.start + piece.bytes == tm.free_list[at].start) {
            tm.free_list[at - 1].bytes += tm.free_list[at].bytes;
            list_remove(tm.free_list, &tm.free_count, at);
        }
        return;
    }
    if (at < tm.free_count && piece.start + piece.bytes == tm.free_list[at].start) {
        tm.free_list[at].start = piece.start;
        tm.free_list[at].bytes += piece.bytes;
        return;
    }
    list_insert(tm.free_list, &tm.free_count, at, piece);
}

void terafree(void *pointer)
{
    if (!tm.ready || pointer == NULL)
        return;
    uint32_t at = list_position(tm.used_list, tm.used_count, (uint64_t)pointer);
    if (at >= tm.used_count || tm.used_list[at].start != (uint64_t)pointer) {
        printf("terafree: %p was not allocated by teramalloc\n", pointer);
        return;
    }
    struct extent piece = tm.used_list[at];
    list_remove(tm.used_list, &tm.used_count, at);
    free_list_add(piece);
}

long teramem_prefetch(const void *address, size_t bytes)
{
    if (!tm.ready)
        return -E_INVALID;
    if (tm.backend == PAGER_BACKEND_VEMS)
        return 0; /* faults fetch ahead (fault-around, the tier's read-ahead) */
    struct pager_prefetch_message *message = pager_message(PAGER_PREFETCH);
    *message = (struct pager_prefetch_message){(uint64_t)address, bytes};
    return pager_call();
}

long teramem_drop(const void *address, size_t bytes)
{
    if (!tm.ready)
        return -E_INVALID;
    if (tm.backend == PAGER_BACKEND_VEMS)
        return 0; /* the tier's CLOCK chooses which lines go */
    struct pager_drop_message *message = pager_message(PAGER_DROP);
    *message = (struct pager_drop_message){(uint64_t)address, bytes};
    return pager_call();
}

long teramem_stats(struct teramem_stats *stats)
{
    if (!tm.ready)
        return -E_INVALID;
    if (tm.backend == PAGER_BACKEND_VEMS)
        return teramem_vems_stats(stats);
    struct pager_stats_message *m = pager_message(PAGER_STATS);
    long result = pager_call();
    if (result < 0)
        return result;
    *stats = (struct teramem_stats){m->swap_in_blocks,      m->swap_out_blocks, m->bytes_in,
                                    m->bytes_out,           m->clean_drops,     m->resident_bytes,
                                    m->peak_inflight_bytes, m->zero_fills};
    return 0;
}

bool teramem_contains(const void *pointer)
{
    uint64_t address = (uint64_t)pointer;
    return tm.ready && address >= tm.base && address - tm.base < tm.capacity;
}

uint64_t teramem_base(void)
{
    return tm.ready ? tm.base : 0;
}

uint64_t teramem_capacity(void)
{
    return tm.ready ? tm.capacity : 0;
}
