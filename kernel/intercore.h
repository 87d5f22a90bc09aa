/* intercore.h: the inter-core area of seed 003 §2.2.3. An N×N array of
 * rings: entry (i,j) is written only by core i and read only by core j, so
 * the path needs no lock; a core is sent an IPI only while it waits. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cpu.h"
#include "ring.h"

#define INTERCORE_SLOTS 16 /* messages in flight per ordered pair of cores */

enum intercore_type {
    MESSAGE_NONE = 0,
    MESSAGE_MEMORY_ALLOCATE, /* p → m: argument[0] = frames; reply: [0] = physical or 0 */
    MESSAGE_SELFTEST_START,  /* m → p: argument[0] = rounds */
    MESSAGE_SELFTEST_PING,   /* any → any: argument[0] = sequence within the pair */
    MESSAGE_SELFTEST_DONE,   /* p → m: [0] = received, [1] = out of order, [2] = sent */
    MESSAGE_HALT,            /* m → p: reply, then stop for good (orderly power-off) */
    MESSAGE_PROCESS_SPAWN,   /* → m: [0] = struct spawn_request * (kernel copy), [1] = parent;
                                reply [0] = pid or -error */
    MESSAGE_PROCESS_GROW,    /* → m: [0] = pid, [1] = bytes; reply [0] = old heap end or -error */
    MESSAGE_PROCESS_EXITED,  /* → m: [0] = pid; its core has left it: free its memory */
    MESSAGE_PROCESS_COLLECT, /* → m: [0] = pid; its parent has read the exit code; reply */
    MESSAGE_PROCESS_ADOPT,   /* m → owner: [0] = pid, a new ready process */
    MESSAGE_PROCESS_WAKE,    /* → owner: [0] = pid, re-check what it waits for */
    MESSAGE_PROCESS_KILL,    /* → owner: [0] = pid */
    MESSAGE_POWER_OFF,       /* → m: [0] = status */
    MESSAGE_ICA_ALLOCATE,    /* → m: [0] = pid, [1] = kind, [2] = bytes; reply [0] = id or -error */
    MESSAGE_ICA_FREE,        /* → m: [0] = id (already peeled by its holder); reply */
    MESSAGE_ICA_TABLES,      /* → m: [0] = pid, [1] = address, [2] = bytes; reply [0] = 0 or -error */
    MESSAGE_SERVER_REGISTER, /* → m: [0] = pid, [1] = name (kernel copy); reply [0] = 0 or -error */
    MESSAGE_ICA_RESULT,      /* → requester's core: [0] = requester pid, [1] = control id */
    MESSAGE_ICA_DISCARD,     /* → m: [0] = control id of a travelling ICA nobody can take */
    MESSAGE_ICA_FREE_ORPHAN, /* → m: [0] = id of a data ICA whose lender ended and whose
                                last lend just ended */
    MESSAGE_PAGER_REGION,    /* → m: [0] pid, [1] pager pid, [2] bytes; reply [0] base or -error */
    MESSAGE_PAGER_MAP,       /* → m: [0] pager pid, [1] pid, [2] address, [3] bytes, [4] ICA id */
    MESSAGE_PAGER_UNMAP,     /* → m: [0] pager pid, [1] pid, [2] address, [3] bytes, [4] keep */
    MESSAGE_PAGER_SCAN,      /* → m: [0] pager pid, [1] pid, [2] address, [3] bytes, [4] flags */
    MESSAGE_PAGER_RELEASE,   /* → m: [0] pid; reply [0] 0 */
    MESSAGE_FIRMWARE_TABLE,
    MESSAGE_COPY_TO,         /* → m: [0] caller pid, [1] target pid, [2] offset, [3] source,
                                [4] bytes; reply [0] 0 or -error */  /* → m: [0] pid, [1] signature, [2] user buffer, [3] size */
    MESSAGE_DEVICE_MAP,      /* → m: [0] = pid, [1] = physical, [2] = bytes; reply [0] = address
                                or -error (mkernel/device_memory.c) */
    MESSAGE_DMA_ALLOCATE,    /* → m: [0] = pid, [1] = bytes; reply [0] = address or -error,
                                [1] = physical, [2] = bytes */
    MESSAGE_TYPE_COUNT,
    MESSAGE_REPLY = 0x8000, /* or-ed into the type of an answer */
};

struct intercore_message {
    uint32_t type;
    uint32_t from;     /* sending core, filled in by intercore_send */
    uint64_t sequence; /* matches a reply to its request */
    uint64_t argument[6];
};

struct intercore_area {
    uint32_t core_count;
    uint32_t entry_bytes;
    uint8_t entries[] __attribute__((aligned(64)));
};

/* Bytes the area for `core_count` cores occupies. */
size_t intercore_area_bytes(uint32_t core_count);
void intercore_area_init(struct intercore_area *area, uint32_t core_count);
/* The ring core `from` writes and core `to` reads. */
struct ring *intercore_entry(struct intercore_area *area, uint32_t from, uint32_t to);

/* Sends to core `to`; while the entry is full, handles incoming messages
 * (so two cores sending to each other cannot deadlock). */
void intercore_send(uint32_t to, struct intercore_message *message);
/* Sends and interrupts core `to` whatever it is doing: for waking a process
 * that waits there (its core may be busy running another process). */
void intercore_send_urgent(uint32_t to, struct intercore_message *message);
/* Sends and waits for the reply with the same sequence number. */
void intercore_call(uint32_t to, struct intercore_message *message,
                    struct intercore_message *reply);
/* The same, giving up after `timeout_cycles` TSC cycles; false if no reply came. */
bool intercore_call_bounded(uint32_t to, struct intercore_message *message,
                            struct intercore_message *reply, uint64_t timeout_cycles);
/* Answers `request` with `reply` (type and sequence are set here). */
void intercore_reply(const struct intercore_message *request, struct intercore_message *reply);

typedef void (*intercore_handler)(const struct intercore_message *message);
void intercore_set_handler(uint32_t type, intercore_handler handler);
/* Handles every message waiting in this core's inboxes; returns how many.
 * intercore_poll looks at the core's inbox hint first (inline) and drains
 * only when a sender has pushed since the last drain. */
unsigned intercore_drain(void);
static inline unsigned intercore_poll(void)
{
    /* A push made after the drain clears the hint sets it again: nothing is missed. */
    if (!__atomic_load_n(&this_cpu()->inbox_hint, __ATOMIC_ACQUIRE))
        return 0;
    return intercore_drain();
}
/* Halts until an IPI or interrupt arrives, unless a message is already waiting. */
void intercore_wait(void);
/* Installs the IPI vector handler; each core calls it once. */
void intercore_install(void);
