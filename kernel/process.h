/* process.h: the process table, shared by both kernels. Slots are taken and
 * released only by the m-kernel (which builds address spaces); a process's
 * scheduling fields are written only by the core it runs on; the few fields
 * other cores write are _Atomic. A pid maps to slot pid % PROCESS_SLOTS. */
#pragma once
#include <formica/file_region.h>
#include <formica/pager.h>
#include <formica/syscalls.h>
#include <stdbool.h>
#include <stdint.h>
#include "fpu.h"
#include "layout.h" /* USER_SPACE_END */
#include "ring.h"
#include "shared.h"

#define INIT_PID 1 /* the first process: starts (and restarts) the servers, adopts orphans */
#define PROCESS_KERNEL_STACK_PAGES 4
#define USER_SPACE_START 0x400000ull
#define USER_STACK_TOP 0x00007fffff000000ull
#define USER_STACK_PAGES 16
/* A program's segments and its heap end below the first window the kernel
 * maps into a process (the pager's region, then the ICA windows, kept
 * regions and device windows), so nothing of the process's own ever lies
 * under one of them (address_space_destroy relies on it). */
#define USER_PROGRAM_END PAGER_REGION_BASE
/* Exit code of a process ended by a fault: this plus the exception vector. */
#define PROCESS_EXIT_FAULT_BASE 128
/* Exit code of a killed process. */
#define PROCESS_EXIT_KILLED (-1)

enum wait_reason {
    WAIT_NONE = 0,
    WAIT_NOTIFICATION, /* SYS_AWAIT */
    WAIT_CHILD,        /* SYS_WAIT */
    WAIT_SLEEP,        /* SYS_SLEEP, console polling */
    WAIT_IRQ = 8,      /* SYS_IRQ_WAIT (kernel/irq.c) */
    WAIT_ICA,          /* SYS_ICA_RECEIVE / SYS_ICA_COLLECT / a synchronous request */
};
/* process_info shows the kernel's wait reasons, and PROCESS_WAIT_ICA_ROOM
 * for a sender waiting for room in a ring (room_of_server, a timed sleep). */
_Static_assert(WAIT_ICA == PROCESS_WAIT_ICA && PROCESS_WAIT_ICA_ROOM > WAIT_ICA,
               "process_info shows the kernel's wait reasons");

struct server_entry; /* ica.h */

/* A file region (formica/file_region.h, docs/mmap.md): written by the
 * m-kernel while the process waits in SYS_FILE_REGION or _END, read by its
 * core at a fault. bytes 0: the slot is free. The parts of a region a
 * munmap cut in the middle share its `mapping` number (and FS handle). */
struct file_region {
    uint64_t base, bytes;
    uint64_t offset;     /* the file offset of its first page */
    uint64_t handle;     /* FS's handle of the region (FS_MAP's) */
    uint32_t fs;         /* the FS instance that gave it */
    uint32_t flags;      /* FILE_REGION_* */
    uint64_t last_fault; /* page index of the last fault + 1 (0: none): sequential faults */
    uint64_t mapping;    /* the mmap it is (a part of): its handle closes with the last part */
};

#define PROCESS_LEAF_CACHE 8
#define PROCESS_CONTROL_LEAVES 8 /* ICA_CONTROL_SLOTS pages / 512 */
#define PROCESS_BLOCK_LEAVES 16  /* ICA_BLOCK_SLOTS pages / 512 */
#define RESULT_RING_SLOTS 128    /* > ICA_PER_PROCESS: results can never overflow it */

/* Fields are grouped by the core that writes them. The m-kernel fills a
 * slot before the process runs and empties it after; in between, the
 * process's own core writes its scheduling and ICA state, and other cores
 * write only the _Atomic fields marked "any core". A slot is one page
 * (PROCESS_RECORD_BYTES): a slot's address is its number shifted, where a
 * size like 3,840 cost every hop of the fast path a few instructions of
 * shifts and subtractions (docs/profiling.md, "The process record's
 * size, and code shapes the request path keeps"). */
#define PROCESS_RECORD_BYTES 4096
struct __attribute__((aligned(PROCESS_RECORD_BYTES))) process {
    /* Owning core: saved at every switch (fpu.h: xsave64 or fxsave;
     * first in the record so it stays 64-byte aligned). */
    uint8_t fpu_state[FPU_STATE_BYTES] __attribute__((aligned(FPU_STATE_ALIGN)));

    /* m-kernel: identity and memory, set at spawn, read by every core. */
    uint32_t pid;
    uint32_t core;
    uint32_t priority;
    char name[NAME_BYTES];
    uint64_t root;              /* page-table root, physical */
    uint64_t kernel_stack_base; /* PROCESS_KERNEL_STACK_PAGES pages, direct map */
    uint64_t heap_start, heap_end;
    uint64_t memory_bytes;       /* user memory mapped */
    _Atomic uint32_t parent;     /* 0 once the parent has gone (m-kernel) */
    uint32_t icas_allocated;     /* counted by the m-kernel against ICA_PER_PROCESS */
    uint32_t controls_allocated; /* of those, control ICAs (the account's share of each pool) */
    uint32_t blocks_allocated;   /* block ICAs, against ICA_BLOCKS_PER_PROCESS */
    /* m-kernel: remote paging (formica/pager.h): faults in [pager_base,
     * +pager_bytes) go to server `pager` with the control ICA pager_control. */
    uint32_t pager;
    uint64_t pager_base, pager_bytes;
    uint64_t pager_control;
    char pager_name[16]; /* the name `pager` registered (SERVER_NAME_BYTES): a restarted
                            pager is the process registered under it next */
    /* m-kernel: file regions (mmap) and their control ICA, allocated with
     * the first. */
    struct file_region file_regions[FILE_REGIONS_PER_PROCESS];
    uint64_t file_region_control;
    uint64_t file_region_mappings; /* mmaps recorded so far: the next one's number */
    /* Owning core: mapping lends installed and not ended yet (the m-kernel
     * reads it at exit to skip the table when 0). */
    _Atomic uint32_t mapping_lends;
    /* Mapping lends it may still install without summing its account again
     * (account_memory.h), in the low 32 bits: granted by its core from the
     * room a sum found, taken back by the m-kernel before each memory check
     * of its account, which also bumps the high 32 bits (a generation), so
     * a grant computed before the check never lands after it. */
    _Atomic uint64_t mapping_lend_credit;
    uint32_t mapping_lend_cursor; /* where the next look for one of its own lends to end starts */
    /* m-kernel: authority (docs/authority.md), set at spawn. */
    uint32_t rights;        /* RIGHT_* (formica/rights.h) */
    uint32_t account;       /* pid that started its quota account */
    uint32_t uid, gid;      /* its user and group: stamped into every control ICA it sends */
    uint32_t process_limit; /* the account's limits, copied into each member */
    uint64_t memory_limit;
    uint64_t ica_bytes;     /* ICAs it allocated and still counts (also in memory_bytes) */
    uint64_t charged_bytes; /* servers' memory spent for it (SYS_ACCOUNT_CHARGE; also in
                               memory_bytes) */
    /* m-kernel: exit bookkeeping; the slot is freed when both are true (or
     * at once for an orphan init adopted, which nobody waits for). */
    bool resources_released;
    bool collected;
    bool adopted;

    /* Owning core: scheduling (the m-kernel sets state once, before adoption). */
    _Atomic uint32_t state; /* enum process_state; read by any core */
    int32_t exit_code;
    uint64_t saved_rsp; /* kernel rsp while switched out */
    uint32_t wait_reason;
    uint64_t wake_tick; /* WAIT_SLEEP: core tick to wake at */
    union {
        struct {
            _Atomic uint32_t kill_requested;
            _Atomic uint32_t crash_requested; /* SYS_CRASH: a kill that ends in a real fault
                                                 (crash.c) */
        };
        _Atomic uint64_t end_requested; /* either, in one load */
    };
    uint32_t restarts;   /* spawn_request.restarts, shown by ps */
    uint32_t slice_left; /* ticks before preemption */
    uint64_t ticks;      /* ticks spent running */
    uint64_t cpu_cycles; /* TSC cycles from switch-in to switch-out, its system calls included */
    uint64_t cycles_charged; /* of them, charged to an account's use of its core (scheduler.c) */
    uint32_t share_weight;   /* its cycles count 1000/weight in the fair queue (0: 1000) */
    /* A server: the account of the last request that arrived (ica_note_client),
     * to which the scheduler charges the server's time on its core. */
    uint32_t serving_account;
    uint32_t switches_in; /* times it got a core */
    /* Bumped when a translation of it is removed (translation_stamp.h). */
    uint64_t translation_stamp;
    uint64_t copy_window, copy_window_bytes; /* SYS_COPY_GRANT */
    /* The wait protocol's fields (direct_request, parked, parked_for,
     * room_of_server, and below ica_waiting, polled_result,
     * poll_handed_server, polled_request) are written only through
     * kernel/ica/ica_wait.h, whose header states their states and
     * transitions. */
    /* Owning core: ICA results. Results from other cores arrive as messages
     * and are queued here by this core. */
    struct {
        struct ring ring;
        uint64_t storage[RESULT_RING_SLOTS];
    } results;
    uint32_t results_seen;            /* results left queued by the last look for a wanted one */
    struct server_entry *server_seen; /* its slot in the server table, when last seen there */
    /* A request a sender on this core handed straight to this server instead
     * of pushing it into its ring (0: none); its next receive takes it first. */
    uint64_t direct_request;
    /* Requests that reached this server without its rings (a direct request,
     * the fast path's handover): with its slot's `taken`, the requests it
     * took (SYS_SERVER_INSTANCE_COUNTS). */
    uint64_t requests_handed;
    /* Where the process, blocked for an ICA inside a system call, can be
     * resumed straight in user mode by the fast path (ica_fastpath.c): enum
     * ica_parked; parked_for is the control ICA a PARKED_IN_CALL waits for. */
    uint32_t parked;
    uint64_t parked_for;
    /* The server whose ring on this core the process waits for room in
     * (kernel/ica/ica_room.c), 0: none. */
    uint32_t room_of_server;
    /* Owning core: the leaf page tables of ICA windows found so far
     * (kernel/ica/ica.c); ICA tables live as long as the address space. The
     * control and block windows have one slot per table; data ICAs share a
     * direct-mapped few (2 MiB region number + 1, 0: empty). */
    uint64_t *control_leaf[PROCESS_CONTROL_LEAVES];
    uint64_t *block_leaf[PROCESS_BLOCK_LEAVES];
    uint64_t leaf_region[PROCESS_LEAF_CACHE];
    uint64_t *leaf_table[PROCESS_LEAF_CACHE];

    /* Any core. */
    _Atomic uint64_t notifications; /* SYS_NOTIFY count: added by the notifier */
    _Atomic uint32_t ica_waiting;   /* set by the owner while blocked for an ICA; a
                                       sender that clears it IPIs the owner */
    /* The result a synchronous requester polls for (ica_poll.h), 0 when it
     * polls for none; a sender on another core takes it to 0 with one
     * exchange instead of sending the result as a message. */
    _Atomic uint64_t polled_result;
    /* The server of this core a sender on another core handed the wake of
     * through polled_result (ICA_RESULT_POLL_SERVER, ica_poll.h): written by
     * that sender before it publishes the state, read by the poller after. */
    uint32_t poll_handed_server;
    /* A server polling for its next request after a send across cores
     * (kernel/ica/ica_wait.h): ICA_REQUEST_POLL_ARMED while a sender on
     * another core may paste a request straight into it, CLAIMED while one
     * does, then the request's id; 0 when it polls for none. */
    _Atomic uint64_t polled_request;
};

/* xsave64 takes a 64-byte-aligned area (fxsave 512 bytes, 16-aligned). */
_Static_assert(FPU_STATE_BYTES >= 832, "the XSAVE area of x87, SSE and AVX is 832 bytes");
_Static_assert(__builtin_offsetof(struct process, fpu_state) % FPU_STATE_ALIGN == 0 &&
                   sizeof(struct process) % FPU_STATE_ALIGN == 0,
               "xsave64 needs a 64-byte-aligned area in every slot");
_Static_assert(sizeof(struct process) == PROCESS_RECORD_BYTES,
               "a process record is one page: grow PROCESS_RECORD_BYTES to a power of two");

static inline uint64_t process_kernel_stack_top(const struct process *process)
{
    return process->kernel_stack_base + PROCESS_KERNEL_STACK_PAGES * 4096;
}

/* The live process with `pid`, or NULL (inline: every handover asks it). */
static inline struct process *process_find(uint32_t pid)
{
    if (pid == 0 || kernel_shared->processes == NULL)
        return NULL;
    struct process *process = &kernel_shared->processes[pid % PROCESS_SLOTS];
    if (process->pid != pid || process->state == PROCESS_FREE)
        return NULL;
    return process;
}
/* Fills `info` from `process` for SYS_PROCESS_LIST. */
void process_describe(const struct process *process, struct process_info *info);
