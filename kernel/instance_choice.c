/* instance_choice.c: the nearest instance of a server to a caller's core:
 * the same core; else, on the caller's socket, the closest core number
 * (neighbouring cores tend to share caches); else instance (core mod N).
 * Ties go to the lower index. */
#include "instance_choice.h"
#include <stdbool.h>

static uint32_t core_distance(uint32_t a, uint32_t b)
{
    return a > b ? a - b : b - a;
}

uint32_t instance_choose(const struct instance_place *places, uint32_t count, uint32_t caller_core,
                         uint32_t (*socket_of)(uint32_t core))
{
    uint32_t caller_socket = socket_of(caller_core);
    bool found = false;
    uint32_t best = 0, best_distance = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t core = places[i].core;
        if (socket_of(core) != caller_socket)
            continue;
        uint32_t distance = core_distance(core, caller_core);
        if (!found || distance < best_distance) {
            found = true;
            best = i;
            best_distance = distance;
        }
    }
    return found ? best : caller_core % count;
}
