/* block_pins.c: the blocks FS borrows from BLK and lends on (block_pins.h).
 * A slot a disk block (direct-mapped); a block is borrowed into an empty
 * slot at its first readblock, and replaces another only when that one went
 * unread since the slot's last miss, nobody holds it lent on, and hits have
 * earned the replacement (with little reuse, as a large file read at
 * random, FS then forwards to BLK as it would without borrowing). */
#include "block_pins.h"
#include "block_client.h"
#include <formica/errors.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdbool.h>
#include <stdio.h>

struct block_pin {
    uint64_t control;    /* FS's control ICA the lend came with (0: none allocated) */
    uint64_t block;      /* the lent block ICA (0: nothing borrowed) */
    uint64_t disk_block; /* the disk block it caches */
    long lender;         /* the BLK shard's pid that lent it */
    bool referenced;     /* answered from since its slot's last miss */
};

static struct block_pin pins[BLOCK_PINS];
static uint32_t slots;               /* the pins in use: block_pins_open */
static uint32_t replacements_earned; /* a hit earns one, up to BLOCK_PINS */

static inline long lend_on(struct block_pin *pin, uint64_t control)
{
    struct ica_control *page = ica_control_of(control);
    page->lent[0] = pin->block;
    page->lent_count = 1;
    pin->referenced = true;
    return (long)STORAGE_BLOCK_BYTES;
}

/* Whether the slot's block may give way to another: a slot with nothing
 * borrowed, or one borrowed from a shard that has since been restarted,
 * always; else a second chance, an earned replacement, and nobody holding
 * the block lent on (so no more of BLK's cache is held through FS than
 * BLOCK_PINS blocks). */
static bool may_replace(const struct block_pin *pin, long lender)
{
    if (pin->block == 0 || pin->lender != lender)
        return true;
    if (pin->referenced || replacements_earned == 0)
        return false;
    if (ica_lend_count(pin->block) > 1)
        return false;
    replacements_earned--;
    return true;
}

struct borrow_request {
    uint64_t control;
    uint64_t disk_block;
};

static long prepare_borrow(void *context)
{
    const struct borrow_request *asked = context;
    request_prepare(asked->control, BLK_READ);
    struct blk_read_message *read = blk_read_of(ica_control_of(asked->control));
    *read =
        (struct blk_read_message){.first_block = asked->disk_block, .blocks = 1, .flags = BLK_LEND};
    block_client_view_stamp(read, block_client_shard_of(asked->disk_block));
    return 0;
}

void block_pins_open(uint32_t instances)
{
    uint32_t share = BLOCK_PINS_ALL / (instances > 0 ? instances : 1);
    uint32_t wanted = share > BLOCK_PINS ? BLOCK_PINS : share;
    if (wanted < BLOCK_PINS_LEAST)
        wanted = BLOCK_PINS_LEAST;
    for (slots = 0; slots < wanted; slots++) {
        if (pins[slots].control != 0)
            continue; /* open again (a replica mounting anew): kept */
        long id = ica_allocate(ICA_KIND_CONTROL, 4096);
        if (id < 0) {
            printf("fs: borrows at most %u blocks from BLK: %s\n", slots, error_text(id));
            break;
        }
        pins[slots].control = (uint64_t)id;
    }
}

/* Borrows `disk_block` from its shard into `pin`; the request itself lets
 * the slot's earlier block go (passing the control ICA on ends its lend).
 * False when BLK does not lend it (it copies instead, or failed); *stale
 * when it refused a replica's view as too old. */
static bool borrow(struct block_pin *pin, uint64_t disk_block, uint32_t shard, bool *stale)
{
    if (pin->control == 0)
        return false; /* its control ICA was lost */
    pin->block = 0;
    struct borrow_request asked = {pin->control, disk_block};
    long result =
        blk_shards_call(&block_client_shards, shard, pin->control, prepare_borrow, &asked);
    if (!ica_held(pin->control)) {
        pin->control = 0; /* not expected: the call keeps or gets it back */
        return false;
    }
    const struct ica_control *page = ica_control_of(pin->control);
    *stale = result == -E_STALE;
    if (result < 0 || page->lent_count != 1)
        return false;
    pin->block = page->lent[0];
    pin->disk_block = disk_block;
    pin->lender = block_client_shards.pids[shard];
    pin->referenced = false;
    return true;
}

/* A miss in the pin's slot: borrowed now and lent on, or BLOCK_NOT_PINNED
 * (apart: the usual answer is a hit). */
static __attribute__((noinline)) long borrow_and_answer(struct block_pin *pin, uint64_t control,
                                                        uint64_t disk_block, uint32_t shard)
{
    if (!may_replace(pin, block_client_shards.pids[shard])) {
        pin->referenced = false;
        return BLOCK_NOT_PINNED;
    }
    bool stale = false;
    if (!borrow(pin, disk_block, shard, &stale))
        return stale ? -E_STALE : BLOCK_NOT_PINNED;
    return lend_on(pin, control);
}

long block_pins_answer(uint64_t control, uint64_t disk_block, uint32_t shard)
{
    if (slots == 0)
        return BLOCK_NOT_PINNED;
    struct block_pin *pin = &pins[disk_block % slots];
    if (pin->block == 0 || pin->disk_block != disk_block ||
        pin->lender != block_client_shards.pids[shard])
        return borrow_and_answer(pin, control, disk_block, shard);
    if (replacements_earned < BLOCK_PINS)
        replacements_earned++;
    return lend_on(pin, control);
}

/* The control ICA `control` back with no lend: an empty request to FS
 * itself is not possible, so the lend ends by freeing the ICA and taking a
 * new one (0 when the pool refuses). */
static uint64_t without_its_lend(uint64_t control)
{
    ica_free(control);
    long id = ica_allocate(ICA_KIND_CONTROL, 4096);
    return id < 0 ? 0 : (uint64_t)id;
}

/* Lets every borrowed block go; how many there were. */
static uint32_t release_all(void)
{
    uint32_t borrowed = 0;
    for (uint32_t i = 0; i < slots; i++) {
        if (pins[i].block == 0)
            continue;
        borrowed++;
        pins[i].control = without_its_lend(pins[i].control);
        pins[i].block = 0;
    }
    replacements_earned = 0;
    return borrowed;
}

void block_pins_forget(uint64_t disk_block)
{
    if (slots == 0)
        return;
    struct block_pin *pin = &pins[disk_block % slots];
    if (pin->disk_block == disk_block)
        pin->block = 0; /* its lend ends at the slot's next borrow */
}

void block_pins_forget_all(void)
{
    for (uint32_t i = 0; i < slots; i++)
        pins[i].block = 0;
}

void block_pins_refused(uint64_t disk_block, uint32_t shard, long error)
{
    uint32_t borrowed = release_all();
    printf("fs: the lend on of disk block %lu (BLK shard %u) refused: %s; %u borrowed blocks let "
           "go\n",
           (unsigned long)disk_block, shard, error_text(error), borrowed);
}
