/* flashbench.h: the pieces of flashbench (apps/flashbench), seed 000's
 * workloads over memory taken four ways: the options (main.c), the memory
 * methods (memory.c, mapped_file.c) and the workloads (fio.c, stream.c,
 * himeno.c), each of which fills a result that main.c prints as one
 * @json {"kind":"flash",...} line. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum flash_method { METHOD_MALLOC_SWAP, METHOD_MMAP, METHOD_FLMALLOC, METHOD_DRAM, METHOD_COUNT };

struct flash_options {
    const char *workload; /* fio, stream, himeno */
    enum flash_method method;
    uint64_t bytes;       /* the workload's data, all arrays together */
    uint64_t local_bytes; /* the local memory bound: the pager's limit, flmalloc's limit */
    uint64_t rounds;      /* fio: operations; stream: rounds; himeno: iterations (0: default) */
    uint64_t io_bytes;    /* fio: bytes of one read or write */
};

struct flash_result {
    uint64_t microseconds; /* the timed part */
    bool verified;         /* the data checked out */
    uint64_t rounds;       /* what was done */
    uint64_t work_bytes;   /* bytes moved in the timed part (fio, stream) */
    uint64_t flops;        /* floating-point operations (himeno) */
    uint32_t grid[3];      /* himeno's grid */
    uint32_t gosa_bits;    /* himeno's last residual, the float's bits: equal for every method */
};

/* The memory of one run: arrays taken one by one, the way the method says. */
long flash_memory_start(const struct flash_options *options, uint32_t arrays);
/* `bytes` of memory for the next array, zeroed; NULL after a message. */
void *flash_memory_take(uint64_t bytes);
/* Makes what was written durable where the method has somewhere to (mmap: msync). */
long flash_memory_sync(void);
void flash_memory_end(void);
const char *flash_method_name(enum flash_method method);
bool flash_method_parse(const char *name, enum flash_method *method);

/* mapped_file.c: `bytes` of a new file on the disk mapped shared (and unlinked at once) as
 * array `number`; its msync; its unmap and close. */
void *flash_mapped_file(uint64_t bytes, uint32_t number);
long flash_mapped_sync(void *base, uint64_t bytes);
void flash_mapped_end(void *base, uint64_t bytes, uint32_t number);

/* The workloads: 0 when the run was made (result filled), else an error after a message. */
long flash_fio(const struct flash_options *options, struct flash_result *result);
long flash_stream(const struct flash_options *options, struct flash_result *result);
long flash_himeno(const struct flash_options *options, struct flash_result *result);

/* Microseconds from the time-stamp counter. */
uint64_t flash_now_us(void);

/* What differs between the two systems flashbench is built for: system.c on Formica,
 * build/linux/flashbench_linux.c in the static Linux build (build/linux/build.sh). */
extern const char flash_system[]; /* the @json line's "system": "formica" or "linux" */
/* The folder of the mmap method's files ("" for the root) and flmalloc's far folder (NULL:
 * flmalloc's own default). */
extern const char flash_file_directory[];
const char *flash_far_directory(void);
/* Bounds the local memory of a run of options->method to options->local_bytes where the
 * system bounds it per process (Linux: the cgroup's memory.max for mmap and flmalloc; the pager's
 * limit, set by teramem_init, for malloc-swap); 0, or -1 after a message. */
long flash_local_bound(const struct flash_options *options);
