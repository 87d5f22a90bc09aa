/* open_files_mirror.c: the owner's open-file table mirrored for its
 * replicas (open_files_mirror.h). A slot's owner field is written last
 * when a slot is taken and cleared first when it is given up, and a
 * directory's REMOVED flag is written before its inode becomes 0: a
 * reader that finds the owner and generation unchanged around its copy
 * has a whole slot. */
#include "open_files_mirror.h"
#include <stdatomic.h>

static void store(uint32_t *field, uint32_t value)
{
    atomic_store_explicit((_Atomic uint32_t *)field, value, memory_order_release);
}

static uint32_t load(const uint32_t *field)
{
    return atomic_load_explicit((const _Atomic uint32_t *)field, memory_order_acquire);
}

void open_files_mirror_slot(struct open_files *mirror, const struct open_files *table,
                            uint32_t slot)
{
    struct open_file *to = &mirror->slots[slot];
    const struct open_file *from = &table->slots[slot];
    if (load(&to->owner) != from->owner || load(&to->generation) != from->generation)
        store(&to->owner, 0); /* given up or taken by another: no reader takes it meanwhile */
    store(&to->generation, from->generation);
    store(&to->account, from->account);
    store(&to->flags, from->flags);
    store(&to->inode, from->inode);
    store(&to->owner, from->owner);
    store(&mirror->in_use, table->in_use);
}

void open_files_mirror_all(struct open_files *mirror, const struct open_files *table)
{
    for (uint32_t slot = 0; slot < OPEN_FILES_MAX; slot++)
        open_files_mirror_slot(mirror, table, slot);
}

bool open_files_mirror_find(const struct open_files *mirror, uint32_t owner, uint64_t handle,
                            struct open_file *out)
{
    uint64_t slot = handle & ((1u << OPEN_FILE_SLOT_BITS) - 1);
    uint64_t generation = handle >> OPEN_FILE_SLOT_BITS;
    if (owner == 0 || slot >= OPEN_FILES_MAX)
        return false;
    const struct open_file *file = &mirror->slots[slot];
    if (load(&file->owner) != owner || load(&file->generation) != generation)
        return false;
    out->owner = owner;
    out->generation = (uint32_t)generation;
    out->account = load(&file->account);
    out->inode = load(&file->inode); /* before the flags: a 0 here comes with REMOVED */
    out->flags = load(&file->flags);
    return load(&file->owner) == owner && load(&file->generation) == generation;
}
