/* insn_profile.c: a QEMU TCG plugin that counts the guest instructions
 * executed per (vCPU kind, process, translation-block address), for
 * build/profile/profile.py to resolve into functions (docs/profiling.md).
 * Uses only QEMU's public plugin API, present alike in 7.2 and 10.
 *
 * Arguments: out=FILE (where the counts go) and marks=A:N, repeated per
 * kernel: the kernel's profile_pads at A, N one-byte pads. A block starting
 * at A + pid tells which pid the vCPU runs from then on (0: the kernel's own
 * scheduler). Memory callbacks would be simpler but QEMU 7.2 reports loads of
 * other instructions to them. */
#include <inttypes.h>
#include <qemu-plugin.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define MAX_KERNELS 4
#define MAX_VCPUS 256

struct mark_window {
    uint64_t pads, slots;
};

struct block {
    uint64_t vaddr;
    uint32_t instructions;
};

struct count {
    uint64_t vaddr;
    uint32_t pid;
    uint32_t used;
    uint64_t instructions, executions;
};

struct vcpu_counts {
    uint32_t pid;
    uint64_t capacity, used;
    struct count *table;
};

static struct mark_window windows[MAX_KERNELS];
static int window_count;
static struct vcpu_counts vcpus[MAX_VCPUS];
static char out_path[4096] = "insn_profile.txt";

static uint64_t hash_of(uint32_t pid, uint64_t vaddr)
{
    uint64_t key = vaddr ^ ((uint64_t)pid << 47) ^ ((uint64_t)pid >> 17);
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return key;
}

static struct count *slot_for(struct vcpu_counts *counts, uint32_t pid, uint64_t vaddr);

static void grow(struct vcpu_counts *counts)
{
    struct count *old = counts->table;
    uint64_t old_capacity = counts->capacity;
    counts->capacity = old_capacity ? old_capacity * 2 : 1u << 14;
    counts->table = calloc(counts->capacity, sizeof(struct count));
    if (counts->table == NULL) {
        fprintf(stderr, "insn_profile: out of memory\n");
        exit(1);
    }
    counts->used = 0;
    for (uint64_t i = 0; i < old_capacity; i++)
        if (old[i].used) {
            struct count *moved = slot_for(counts, old[i].pid, old[i].vaddr);
            moved->instructions = old[i].instructions;
            moved->executions = old[i].executions;
        }
    free(old);
}

/* The counter of (pid, vaddr) on this vCPU, made on first use. */
static struct count *slot_for(struct vcpu_counts *counts, uint32_t pid, uint64_t vaddr)
{
    if ((counts->used + 1) * 2 > counts->capacity)
        grow(counts);
    uint64_t mask = counts->capacity - 1;
    for (uint64_t i = hash_of(pid, vaddr) & mask;; i = (i + 1) & mask) {
        struct count *slot = &counts->table[i];
        if (!slot->used) {
            slot->used = 1;
            slot->pid = pid;
            slot->vaddr = vaddr;
            counts->used++;
            return slot;
        }
        if (slot->pid == pid && slot->vaddr == vaddr)
            return slot;
    }
}

static void on_block(unsigned int vcpu, void *data)
{
    const struct block *block = data;
    struct vcpu_counts *counts = &vcpus[vcpu % MAX_VCPUS];
    struct count *slot = slot_for(counts, counts->pid, block->vaddr);
    slot->instructions += block->instructions;
    slot->executions++;
}

static void on_pad(unsigned int vcpu, void *data)
{
    vcpus[vcpu % MAX_VCPUS].pid = (uint32_t)(uintptr_t)data;
}

/* The pid whose pad starts at `vaddr`, or -1. */
static long pad_pid(uint64_t vaddr)
{
    for (int i = 0; i < window_count; i++)
        if (vaddr >= windows[i].pads && vaddr < windows[i].pads + windows[i].slots)
            return (long)(vaddr - windows[i].pads);
    return -1;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    struct block *block = malloc(sizeof(*block));
    if (block == NULL)
        return;
    block->vaddr = qemu_plugin_tb_vaddr(tb);
    block->instructions = (uint32_t)qemu_plugin_tb_n_insns(tb);
    long pid = pad_pid(block->vaddr);
    if (pid >= 0)
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_pad, QEMU_PLUGIN_CB_NO_REGS,
                                             (void *)(uintptr_t)pid);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, block);
}

/* One line per counter: vcpu pid vaddr instructions executions. */
static void write_counts(qemu_plugin_id_t id, void *data)
{
    (void)id;
    (void)data;
    FILE *out = fopen(out_path, "w");
    if (out == NULL) {
        fprintf(stderr, "insn_profile: cannot write %s\n", out_path);
        return;
    }
    for (int vcpu = 0; vcpu < MAX_VCPUS; vcpu++)
        for (uint64_t i = 0; i < vcpus[vcpu].capacity; i++) {
            const struct count *slot = &vcpus[vcpu].table[i];
            if (slot->used)
                fprintf(out, "%d %u 0x%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", vcpu, slot->pid,
                        slot->vaddr, slot->instructions, slot->executions);
        }
    fclose(out);
}

static bool parse_window(const char *text)
{
    struct mark_window *window = &windows[window_count];
    if (window_count == MAX_KERNELS ||
        sscanf(text, "%" SCNx64 ":%" SCNx64, &window->pads, &window->slots) != 2)
        return false;
    window_count++;
    return true;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
                                           char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            snprintf(out_path, sizeof(out_path), "%s", argv[i] + 4);
        } else if (strncmp(argv[i], "marks=", 6) == 0) {
            if (!parse_window(argv[i] + 6)) {
                fprintf(stderr, "insn_profile: bad marks=%s (want hex A:N)\n", argv[i] + 6);
                return -1;
            }
        } else {
            fprintf(stderr, "insn_profile: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, write_counts, NULL);
    return 0;
}
