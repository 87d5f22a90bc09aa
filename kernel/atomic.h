/* atomic.h: the one way kernel code orders memory that another core reads
 * or writes at the same time. Such fields are declared _Atomic (a plain
 * access is then sequentially consistent); where a weaker or a named
 * ordering is meant, the access goes through one of these helpers. */
#pragma once
#include <stdbool.h>

/* Reads that must see everything the writer published before its release. */
#define atomic_load_acquire(pointer) __atomic_load_n((pointer), __ATOMIC_ACQUIRE)
/* Publishes `value` after every write before it. */
#define atomic_store_release(pointer, value) __atomic_store_n((pointer), (value), __ATOMIC_RELEASE)
/* A store no later load may pass (announce, then re-check: no lost wake-up). */
#define atomic_store_fenced(pointer, value) __atomic_store_n((pointer), (value), __ATOMIC_SEQ_CST)
/* Takes the old value and leaves `value`: one winner among racing cores. */
#define atomic_swap(pointer, value) __atomic_exchange_n((pointer), (value), __ATOMIC_ACQ_REL)
/* Takes a lock word: acquire only. */
#define atomic_swap_acquire(pointer, value)                                                        \
    __atomic_exchange_n((pointer), (value), __ATOMIC_ACQUIRE)
/* Sets *pointer to `desired` if it holds *expected; else *expected gets what it holds. */
#define atomic_compare_swap(pointer, expected, desired)                                            \
    __atomic_compare_exchange_n((pointer), (expected), (desired), false, __ATOMIC_ACQ_REL,         \
                                __ATOMIC_ACQUIRE)
/* Adds, returning the value before; subtracts, returning the value after.
 * (Named apart from <stdatomic.h>'s generics, which a host test may include.) */
#define atomic_add(pointer, value) __atomic_fetch_add((pointer), (value), __ATOMIC_ACQ_REL)
#define atomic_sub_fetch(pointer, value) __atomic_sub_fetch((pointer), (value), __ATOMIC_ACQ_REL)
/* Sets bits, returning the value before. */
#define atomic_or(pointer, value) __atomic_fetch_or((pointer), (value), __ATOMIC_ACQ_REL)
/* A statistics counter: atomic, but orders nothing around it. */
#define atomic_count(pointer, value) __atomic_fetch_add((pointer), (value), __ATOMIC_RELAXED)

/* `volatile` stays only where the hardware is on the other side: device
 * registers (LAPIC, IOAPIC, virtio, AHCI) and DMA memory. */
