/* topology.c: the package number is the core's APIC id shifted right by the
 * width of the core and thread fields: from CPUID leaf 0xB when present,
 * else from leaf 1's count of logical processors per package. */
#include "topology.h"
#include "x86.h"

#define LEVEL_TYPE_CORE 2

static uint32_t shift_from_leaf_0b(uint32_t *apic_id)
{
    uint32_t regs[4];
    for (uint32_t level = 0; level < 8; level++) {
        cpuid(0xb, level, regs);
        uint32_t type = (regs[2] >> 8) & 0xff;
        if (type == 0)
            break;
        *apic_id = regs[3];
        if (type == LEVEL_TYPE_CORE)
            return regs[0] & 0x1f;
    }
    return 0;
}

uint32_t topology_socket_of_this_core(void)
{
    uint32_t regs[4];
    cpuid(0, 0, regs);
    uint32_t apic_id = 0;
    if (regs[0] >= 0xb) {
        uint32_t shift = shift_from_leaf_0b(&apic_id);
        if (shift != 0)
            return apic_id >> shift;
    }
    cpuid(1, 0, regs);
    apic_id = regs[1] >> 24;
    uint32_t logical = (regs[1] >> 16) & 0xff;
    if (!((regs[3] >> 28) & 1) || logical <= 1)
        return apic_id; /* no HTT: one logical processor per package */
    uint32_t shift = 0;
    while ((1u << shift) < logical)
        shift++;
    return apic_id >> shift;
}
