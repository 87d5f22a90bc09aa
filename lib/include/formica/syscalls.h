/* syscalls.h: the system-call interface of Formica, shared by the kernels
 * and lib/. Entry is the `syscall` instruction: number in rax, arguments in
 * rdi, rsi, rdx, r10, r8, r9; result in rax (negative = -E_* error code).
 * Every pointer argument is checked against the caller's user mappings. */
#pragma once
#include <stdint.h>

enum syscall_number {
    SYS_EXIT = 0,           /* (code): ends the calling process; never returns */
    SYS_CONSOLE_WRITE = 1,  /* (buffer, length) -> bytes written */
    SYS_CONSOLE_READ = 2,   /* (buffer, length) -> bytes read (>= 1; blocks) */
    SYS_YIELD = 3,          /* () -> 0 */
    SYS_PROCESS_ID = 4,     /* () -> pid of the caller */
    SYS_CORE_ID = 5,        /* () -> core the caller runs on now */
    SYS_SPAWN = 6,          /* (struct spawn_request *) -> pid of the new process */
    SYS_WAIT = 7,           /* (pid, int *exit_code or NULL) -> pid; blocks until it ends */
    SYS_KILL = 8,           /* (pid) -> 0; the process ends with exit code -1 */
    SYS_PROCESS_LIST = 9,   /* (struct process_info *, max) -> number filled */
    SYS_CORE_LIST = 10,     /* (struct core_info *, max) -> number filled */
    SYS_MEMORY_GROW = 11,   /* (bytes) -> old end of the heap; heap grows by whole pages */
    SYS_NOTIFY = 12,        /* (pid) -> 0: adds one to the process's notification count */
    SYS_AWAIT = 13,         /* () -> count taken: blocks until the count is > 0, resets it */
    SYS_SLEEP = 14,         /* (milliseconds) -> 0 */
    SYS_KERNEL_OPTION = 15, /* (name, buffer, size) -> length; the kernel command-line value */
    SYS_PLACEMENT = 16,     /* (struct placement_info *) -> 0: the placement in effect */
    SYS_POWER_OFF = 17,     /* (status) -> never returns: stops every core, exits QEMU */
    SYS_CLOCK = 18,         /* (struct clock_info *) -> 0: TSC frequency and ticks */
    /* ICA communication (formica/ica.h, docs/ica.md). */
    SYS_ICA_ALLOCATE = 20, /* (kind, bytes) -> id; mapped at ica_address(id) */
    SYS_ICA_FREE = 21,     /* (id) -> 0 */
    SYS_ICA_REQUEST = 22,  /* (server pid, control id, flags) -> 0; ICA_SYNC waits for the result */
    SYS_ICA_FORWARD = 23,  /* (server pid, control id, flags) -> 0: next stage, same control ICA */
    SYS_ICA_RETURN = 24,   /* (control id) -> 0: the result goes to returns[top] */
    SYS_ICA_RECEIVE = 25,  /* (flags) -> control id of the next request (server) */
    SYS_ICA_COLLECT = 26,  /* (flags) -> control id of the next result (requester) */
    SYS_SERVER_REGISTER = 27, /* (name) -> 0: the caller serves requests under `name` */
    SYS_SERVER_LOOKUP = 28,   /* (name) -> pid of the server */
    SYS_ICA_STATS = 29,       /* (struct ica_stats *) -> 0 */
    /* Device access for user-space drivers (docs/drivers.md). Only a process
     * spawned with SPAWN_DRIVER may use them; any other gets -E_PERMISSION. */
    SYS_PCI_CONFIG_READ = 30,  /* (bus, device, function, offset, width) -> value: configuration
                                  mechanism #1; bus < 256, device < 32, function < 8, width 1, 2
                                  or 4, offset < 256 and a multiple of width, else -E_INVALID */
    SYS_PCI_CONFIG_WRITE = 31, /* (bus, device, function, offset, width, value) -> 0; same checks */
    SYS_DEVICE_MAP = 32,       /* (physical, bytes) -> user address of `physical`, mapped uncached
                                  and writable; -E_INVALID for RAM, the interrupt controllers, an
                                  empty range or one over DEVICE_MAP_LIMIT bytes */
    SYS_DMA_ALLOCATE = 33,     /* (bytes, struct dma_region *) -> 0: physically contiguous zeroed
                                  memory below 4 GiB, mapped writable; at most DMA_LIMIT_BYTES per
                                  process (-E_NO_MEMORY beyond); freed when the process ends */
    SYS_IRQ_ATTACH = 34,       /* (line) -> GSI: routes an interrupt to the caller's core; a line
                                  < 16 is an ISA IRQ (MADT overrides apply: PCI's interrupt-line
                                  register), else a GSI (level, active low); -E_BUSY if owned,
                                  -E_INVALID if no IOAPIC has it or the caller owns one already */
    SYS_IRQ_WAIT = 35,         /* () -> interrupts since the last call (>= 1); blocks until one
                                  comes. Unmasks a level-triggered line first: acknowledge the
                                  device before calling; -E_INVALID without irq_attach */
    /* Remote paging (formica/pager.h, docs/pager.md). */
    SYS_PAGER_REGION = 40,   /* (pager pid, bytes) -> base of the caller's pager region */
    SYS_PAGER_MAP = 41,      /* (pid, address, bytes, data ICA or 0) -> 0 */
    SYS_PAGER_UNMAP = 42,    /* (pid, address, bytes, keep) -> data ICA id (keep) or 0 */
    SYS_PAGER_SCAN = 43,     /* (pid, address, bytes, flags) -> PAGER_SCAN_* bits */
    SYS_PAGER_RELEASE = 44,  /* () -> 0 */
    SYS_COPY_GRANT = 46,     /* (address, bytes) -> 0: lets others write into that range of the
                                caller's memory with SYS_COPY_TO (one window; 0 bytes revokes) */
    SYS_COPY_TO = 47,        /* (pid, offset, source, bytes) -> 0: the kernel copies the caller's
                                bytes into pid's granted window at offset; -E_PERMISSION outside
                                it, -E_FAULT for unmapped memory. The copying baseline of ICAs. */
    SYS_ICA_LEND_COUNT = 48, /* (id) -> how many holders of control ICAs see this ICA, which
                                the caller holds, lent right now (BLK keeps lent blocks) */
    SYS_FIRMWARE_TABLE = 45, /* (signature "NFIT", buffer, size) -> length of that ACPI table
                                copied (-E_TOO_BIG if size is short, -E_NOT_FOUND) */
    SYS_ICA_RETURN_RECEIVE = 50, /* (control id, receive flags) -> SYS_ICA_RETURN, then
                                    SYS_ICA_RECEIVE: the next request (or the return's error) */
    SYS_ICA_FORWARD_RECEIVE =
        51, /* (server pid, control id, forward flags, receive flags) ->
               SYS_ICA_FORWARD, then SYS_ICA_RECEIVE (or the forward's error) */
    SYS_COUNT = 52
};

#define PRIORITY_SERVER 0 /* runs before any application on the same core */
#define PRIORITY_APPLICATION 1
#define PRIORITY_LEVELS 2

#define CORE_ANY 0xffffffffu /* spawn: let the kernel choose (the caller's core) */
#define NAME_BYTES 32
#define ARGUMENTS_BYTES 256

struct spawn_request {
    char program[NAME_BYTES];        /* name in the boot image, e.g. "hello" */
    char arguments[ARGUMENTS_BYTES]; /* space-separated, argv[1..] */
    uint32_t core;                   /* target core or CORE_ANY */
    uint32_t priority;               /* PRIORITY_SERVER or PRIORITY_APPLICATION */
    uint32_t flags;                  /* SPAWN_* below; 0 for an ordinary process */
};

/* Spawn flags. Process 1 may pass any; another process only the ones it
 * was itself given SPAWN_GRANT_DRIVER for (-E_PERMISSION otherwise). */
#define SPAWN_DRIVER 1u       /* device system calls allowed; IOPL 3 (in/out instructions) */
#define SPAWN_GRANT_DRIVER 2u /* may pass SPAWN_DRIVER and SPAWN_GRANT_DRIVER to its children */
#define SPAWN_FLAGS_ALL 3u

/* Bounds of the device calls. */
#define DEVICE_MAP_LIMIT (16u << 20) /* one SYS_DEVICE_MAP */
#define DMA_LIMIT_BYTES (8u << 20)   /* all SYS_DMA_ALLOCATE of one process */

/* SYS_DMA_ALLOCATE's answer. */
struct dma_region {
    uint64_t address;  /* user virtual address */
    uint64_t physical; /* what the device is given */
    uint64_t bytes;    /* rounded up to whole pages */
};

enum process_state {
    PROCESS_FREE = 0,
    PROCESS_READY,
    PROCESS_RUNNING,
    PROCESS_WAITING,
    PROCESS_ZOMBIE,
};

struct process_info {
    uint32_t pid;
    uint32_t parent;
    uint32_t core;
    uint32_t state; /* enum process_state */
    uint32_t priority;
    int32_t exit_code; /* valid in PROCESS_ZOMBIE */
    uint64_t ticks;    /* timer ticks spent running */
    uint64_t memory_bytes;
    uint64_t cpu_cycles; /* TSC cycles it ran, its system calls included */
    char name[NAME_BYTES];
};

#define KERNEL_M 0
#define KERNEL_P 1

struct core_info {
    uint32_t id;
    uint32_t apic_id;
    uint32_t kernel; /* KERNEL_M or KERNEL_P */
    uint32_t socket;
    uint32_t online;
    uint32_t process_count;
    uint32_t pids[16]; /* the first 16 processes on the core */
    uint64_t ipis_sent, ipis_received, messages_sent, messages_received;
    uint64_t idle_cycles; /* TSC cycles halted with nothing to run */
};

/* Where servers and applications run (see docs/placement.md). */
#define PLACEMENT_SERVERS 4 /* fs, blk, dk, pager */
#define PLACEMENT_MAX_APP_CORES 64

struct placement_info {
    char name[NAME_BYTES];                   /* preset number ("5"), "file" or "default" */
    uint32_t server_core[PLACEMENT_SERVERS]; /* indexed by enum placement_server */
    /* Application cores, in order. With app_spread, cores without a server come
     * first (app_preferred_count of them): P processes use only those while
     * P <= app_preferred_count, else all app_core_count cores evenly. */
    uint32_t app_spread;
    uint32_t app_preferred_count;
    uint32_t app_core_count;
    uint32_t app_cores[PLACEMENT_MAX_APP_CORES];
    uint32_t warnings; /* problems found in the file; the default was used if > 0 */
};

enum placement_server { SERVER_FS = 0, SERVER_BLK = 1, SERVER_DK = 2, SERVER_PAGER = 3 };

struct clock_info {
    uint64_t tsc_hz;
    uint64_t ticks;          /* timer ticks on the caller's core */
    uint64_t tick_period_us; /* length of a tick */
};
