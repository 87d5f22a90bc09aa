/* instance_choice.h: which instance of a server a caller reaches
 * (docs/ica.md, "Server instances"): the one on its core, else the nearest
 * in the topology, else instance (core mod N). Pure, host-tested. */
#pragma once
#include <stdint.h>

/* One instance the registry knows: registered now, or restarting. */
struct instance_place {
    uint32_t index; /* the instance's index */
    uint32_t core;  /* where it runs */
};

/* The position in `places` (count > 0, sorted by index) of the instance a
 * caller on `caller_core` reaches; socket_of(c) is core c's socket. The
 * answer depends only on the caller's core and the places, so a process
 * always reaches the same one. */
uint32_t instance_choose(const struct instance_place *places, uint32_t count, uint32_t caller_core,
                         uint32_t (*socket_of)(uint32_t core));
