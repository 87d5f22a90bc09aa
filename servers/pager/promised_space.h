/* promised_space.h: a backend's space (space.h) with the units promised to
 * attached clients: a region is accepted only if its whole size fits beside
 * the promises, so a store never runs out of room. Used by the disk and
 * block-device backends. */
#pragma once
#include "pager.h"
#include "space.h"

struct promised_space {
    struct space space;
    uint64_t promised_units; /* free units promised to attached clients, not yet placed */
};

/* 0 when the client's whole region fits beside the promises, else
 * -E_NO_SPACE with a log line naming `what`; promises nothing. */
long promised_space_fits(const struct promised_space *room, const struct client *client,
                         const char *what);
/* Promises the client's whole region, or -E_NO_SPACE with a log line naming `what`. */
long promised_space_reserve(struct promised_space *room, const struct client *client,
                            const char *what);
/* The block's first unit, placed first-free on its first store (from the promise). */
uint32_t promised_space_place(struct promised_space *room, struct client *client, uint32_t block);
/* After a pager restart: the kept client's placed units marked used again and
 * the rest of its region promised; -E_INVALID when a placed run overlaps. */
long promised_space_take_back(struct promised_space *room, const struct client *client);
/* Gives back the client's placed units and what was promised but not placed. */
void promised_space_release(struct promised_space *room, struct client *client);
