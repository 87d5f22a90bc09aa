/* syscalls.h: the system-call interface of Formica, shared by the kernels
 * and lib/: the calls themselves (generated) and the structures they fill.
 * Entry is the `syscall` instruction: number in rax, arguments in rdi, rsi,
 * rdx, r10, r8, r9; result in rax (negative = -E_* error code). Every
 * pointer argument is checked against the caller's user mappings. */
#pragma once
#include <stdint.h>

/* The calls, their numbers and arguments: protocol/syscalls.messages (the
 * generated header below; docs/protocol.md lists them). */
#include <formica/protocol/syscalls.h>

#define PRIORITY_SERVER 0 /* runs before any application on the same core */
#define PRIORITY_APPLICATION 1
#define PRIORITY_LEVELS 2

/* A program starts with argc in rdi, argv in rsi and these flags in rdx
 * (lib/start.S keeps them in process_start_flags): what the kernel decided
 * about the machine at boot. */
#define START_WIDE_VECTORS 1u /* the kernel saves AVX state: 256-bit registers are safe */

#define CORE_ANY 0xffffffffu /* spawn: let the kernel choose (the caller's core) */
#define NAME_BYTES 32
#define ARGUMENTS_BYTES 256

struct spawn_request {
    char program[NAME_BYTES];        /* name in the boot image, e.g. "hello" */
    char arguments[ARGUMENTS_BYTES]; /* space-separated, argv[1..] */
    uint32_t core;                   /* target core or CORE_ANY */
    uint32_t priority;               /* PRIORITY_SERVER or PRIORITY_APPLICATION */
    uint32_t flags;                  /* SPAWN_* below; 0 for an ordinary process */
    uint32_t rights;                 /* RIGHT_* (formica/rights.h), at most the parent's;
                                        0: the parent's own */
    uint32_t process_limit;          /* SPAWN_NEW_ACCOUNT: processes the account may hold
                                        (0: ACCOUNT_DEFAULT_PROCESSES) */
    uint64_t memory_limit;           /* SPAWN_NEW_ACCOUNT: bytes the account may map, ICAs
                                        included (0: half of the memory free then) */
    uint32_t restarts;               /* a restarted server's restart count (pid 1 only, else 0) */
    uint32_t uid;                    /* SPAWN_SET_USER: the child's user id (else the parent's) */
    uint32_t gid;                    /* SPAWN_SET_USER: the child's group id (else the parent's) */
    uint32_t reserved;               /* 0 */
};

/* Spawn flags. Process 1 may pass any; another process only the ones it
 * was itself given SPAWN_GRANT_DRIVER for (-E_PERMISSION otherwise). */
#define SPAWN_DRIVER 1u       /* device system calls allowed; IOPL 3 (in/out instructions) */
#define SPAWN_GRANT_DRIVER 2u /* may pass SPAWN_DRIVER and SPAWN_GRANT_DRIVER to its children */
#define SPAWN_NEW_ACCOUNT 4u  /* the child starts a quota account of its own (RIGHT_NEW_ACCOUNT) */
#define SPAWN_SET_USER 8u     /* the child runs as uid/gid of the request (RIGHT_NEW_ACCOUNT) */
#define SPAWN_FLAGS_ALL 15u
/* Quotas (docs/authority.md): an account is a process started with
 * SPAWN_NEW_ACCOUNT and everything it spawns; init's account has no limit. */
#define ACCOUNT_DEFAULT_PROCESSES 128

/* Bounds of the device calls. */
#define DEVICE_MAP_LIMIT (16u << 20) /* one SYS_DEVICE_MAP */
#define DMA_LIMIT_BYTES (8u << 20)   /* all SYS_DMA_ALLOCATE of one process */

/* The keyboards that feed the console input (SYS_KEYBOARD_READY, docs/console.md). */
#define CONSOLE_KEYBOARD_PS2 (1u << 0) /* the kernel's own (mkernel/ps2_keyboard.c) */
#define CONSOLE_KEYBOARD_USB (1u << 1) /* servers/usb */
#define CONSOLE_INPUT_LIMIT 256u       /* bytes in one SYS_CONSOLE_INPUT */

/* SYS_SHARE_WEIGHT: a process's weight between accounts on its core. */
#define SHARE_WEIGHT_ONE 1000u  /* an ordinary account's */
#define SHARE_WEIGHT_MAX 64000u /* drivers up to this (a share of 64/65); others at most ONE */

/* SYS_IRQ_ATTACH_MSI's answer: write address and data into an MSI-X table
 * entry (or the MSI capability) to interrupt the caller's core. */
struct msi_message {
    uint64_t address;
    uint32_t data;
    uint32_t vector; /* the vector it arrives on (for reports) */
};

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
    int32_t exit_code;     /* valid in PROCESS_ZOMBIE */
    uint64_t ticks;        /* timer ticks spent running */
    uint64_t memory_bytes; /* mapped for it, its mapping lends (4 KiB each) included */
    uint64_t cpu_cycles;   /* TSC cycles it ran, its system calls included */
    char name[NAME_BYTES];
    uint32_t rights;       /* RIGHT_* it holds */
    uint32_t account;      /* the pid that started its quota account */
    uint32_t restarts;     /* how often init restarted this server before (0: first start) */
    uint32_t switches_in;  /* times it got a core */
    uint32_t uid;          /* its user id (docs/authority.md) */
    uint32_t gid;          /* its group id */
    uint32_t control_icas; /* ICAs it allocated and holds counted, by pool (the account's share) */
    uint32_t data_icas;
    uint32_t block_icas;
    uint32_t wait_reason; /* PROCESS_WAIT_*: why a waiting process waits */
};

/* process_info.wait_reason (the kernel's enum wait_reason). */
#define PROCESS_WAIT_ICA 9 /* a receive, a collect or a synchronous request's result */
#define PROCESS_WAIT_ICA_ROOM                                                                      \
    10 /* room in a server's request ring (back-pressure; kernel/ica/ica_room.c) */

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
    uint64_t cr3_writes;  /* address-space switches */
    uint64_t device_interrupts;
    uint64_t system_calls;
    uint64_t cr3_kept;     /* of cr3_writes, PCID loads that kept the TLB entries */
    uint64_t stale_faults; /* page faults only a stale TLB entry caused (retried) */
};

/* The most cores Formica runs on (docs/intercore.md); more in the MADT are ignored. */
#define FORMICA_MAX_CORES 256

/* Where servers and applications run (see docs/placement.md). The servers
 * placed are those protocol/NAME.messages says init starts at boot (enum
 * placement_server, PLACEMENT_SERVERS). */
#include <formica/protocol/servers.h>
#define PLACEMENT_MAX_APP_CORES FORMICA_MAX_CORES
/* Room for servers in struct placement_info, so that the structure (an ABI)
 * keeps its size when a server is declared. */
#define PLACEMENT_MAX_SERVERS 8
/* The most instances one server name may have (docs/design.md, "Server
 * instances"): a placement list or per-core names at most this many cores. */
#define SERVER_INSTANCES_MAX 64
_Static_assert(PLACEMENT_SERVERS <= PLACEMENT_MAX_SERVERS,
               "more servers started at boot than struct placement_info holds");

struct placement_info {
    char name[NAME_BYTES];                       /* preset number ("5"), "file" or "default" */
    uint32_t server_core[PLACEMENT_MAX_SERVERS]; /* indexed by enum placement_server */
    /* Application cores, in order. With app_spread, cores without a server come
     * first (app_preferred_count of them): P processes use only those while
     * P <= app_preferred_count, else all app_core_count cores evenly. */
    uint32_t app_spread;
    uint32_t app_preferred_count;
    uint32_t app_core_count;
    uint32_t app_cores[PLACEMENT_MAX_APP_CORES];
    uint32_t warnings; /* problems found in the file; the default was used if > 0 */
    /* Each server's instances (docs/placement.md): how many (>= 1 for a
     * server started at boot) and their cores by instance index; instance
     * 0's core is server_core[s] as well. */
    uint32_t server_instance_count[PLACEMENT_MAX_SERVERS];
    uint32_t server_instance_cores[PLACEMENT_MAX_SERVERS][SERVER_INSTANCES_MAX];
    /* The memory-node role's core (the key `memnode`, docs/placement.md):
     * memnode_placed is 1 when the file names it; 0 leaves the role on the
     * shell's core (memnode_core is then 0). */
    uint32_t memnode_placed;
    uint32_t memnode_core;
};

/* SYS_SERVER_INSTANCE_COUNTS: one instance of a server name. */
struct server_instance_info {
    uint32_t index;      /* the instance's index */
    uint32_t pid;        /* the process registered as it now; 0 while it restarts */
    uint32_t core;       /* the core it runs on (where it registered) */
    uint32_t registered; /* times the instance registered: its first start and restarts */
    uint64_t taken;      /* requests it took out of its rings since it last registered */
};

struct clock_info {
    uint64_t tsc_hz;
    uint64_t ticks;          /* timer ticks on the caller's core */
    uint64_t tick_period_us; /* length of a tick */
};

/* SYS_MEMORY_REPORT's answer, in bytes (docs/userland.md, "Memory"). */
struct memory_report {
    uint64_t total;     /* the frames the m-kernel's allocator manages */
    uint64_t free;      /* of those, free now */
    uint64_t available; /* free less the kernel's reserve, and no more than the
                           caller's quota account may still map */
};
/* The kernel's reserve: free frames the report keeps out of `available`, for
 * the page tables, rings and ICA windows the kernels take as programs run (a
 * figure for planning: the allocator does not hold them back): a 64th of
 * the total, at least MEMORY_RESERVE_MINIMUM. */
#define MEMORY_RESERVE_DIVISOR 64
#define MEMORY_RESERVE_MINIMUM (1ull << 20)
