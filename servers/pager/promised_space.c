/* promised_space.c: a backend's first-free space with promises to clients:
 * PAGER_INIT promises a region's whole size, the first store of each block
 * places it, detaching gives both back, a restart takes them back (promised_space.h). */
#include "promised_space.h"
#include <formica/refusal_log.h>
#include <formica/errors.h>
#include <stdio.h>

static uint32_t units_per_block(const struct client *client)
{
    return client->block_bytes / PAGER_UNIT_BYTES;
}

long promised_space_fits(const struct promised_space *room, const struct client *client,
                         const char *what)
{
    uint64_t wanted = client->bytes / PAGER_UNIT_BYTES;
    uint64_t free_units = space_free_units(&room->space);
    uint64_t available = free_units > room->promised_units ? free_units - room->promised_units : 0;
    if (wanted > available) {
        if (refusal_may_print("pager", client->account))
            printf("pager: %s too small: %lu KiB asked, %lu KiB free\n", what, client->bytes >> 10,
                   available * (PAGER_UNIT_BYTES >> 10));
        return -E_NO_SPACE;
    }
    return 0;
}

long promised_space_reserve(struct promised_space *room, const struct client *client,
                            const char *what)
{
    long error = promised_space_fits(room, client, what);
    if (error == 0)
        room->promised_units += client->bytes / PAGER_UNIT_BYTES;
    return error;
}

uint32_t promised_space_place(struct promised_space *room, struct client *client, uint32_t block)
{
    if (client->slot[block] != PAGER_NO_SLOT)
        return client->slot[block];
    uint32_t unit = space_take(&room->space, units_per_block(client));
    if (unit == PAGER_NO_SLOT)
        return PAGER_NO_SLOT;
    client->slot[block] = unit;
    room->promised_units -= units_per_block(client);
    return unit;
}

void promised_space_release(struct promised_space *room, struct client *client)
{
    uint64_t held = 0;
    for (uint32_t block = 0; block < client->block_count; block++) {
        if (client->slot[block] == PAGER_NO_SLOT)
            continue;
        space_give(&room->space, client->slot[block], units_per_block(client));
        client->slot[block] = PAGER_NO_SLOT;
        held += units_per_block(client);
    }
    room->promised_units -= client->bytes / PAGER_UNIT_BYTES - held;
}

long promised_space_take_back(struct promised_space *room, const struct client *client)
{
    uint32_t units = units_per_block(client), placed = 0;
    for (uint32_t block = 0; block < client->block_count; block++) {
        if (client->slot[block] == PAGER_NO_SLOT)
            continue;
        if (!space_mark(&room->space, client->slot[block], units))
            return -E_INVALID;
        placed += units;
    }
    room->promised_units += client->bytes / PAGER_UNIT_BYTES - placed;
    return 0;
}
