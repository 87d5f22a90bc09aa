/* spinlock.h: a test-and-test-and-set lock with interrupts disabled while
 * held. Used for the console and for device state the hardware makes global
 * (kernel/device_state.h: PCI configuration, IOAPIC and MSI slot locks); the
 * inter-core message path takes no lock. */
#pragma once
#include <stdbool.h>
#include "atomic.h"
#include <stdint.h>
#include "x86.h"

struct spinlock {
    _Atomic uint32_t locked;
};

static inline uint64_t spin_lock(struct spinlock *lock)
{
    uint64_t flags;
    __asm__ volatile("pushfq; popq %0; cli" : "=r"(flags) : : "memory");
    while (atomic_swap_acquire(&lock->locked, 1) != 0)
        while (lock->locked != 0)
            cpu_relax();
    return flags;
}

static inline void spin_unlock(struct spinlock *lock, uint64_t flags)
{
    atomic_store_release(&lock->locked, 0);
    if (flags & (1 << 9))
        interrupts_enable();
}
