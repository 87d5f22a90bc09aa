/* server_registry.h: looking up the servers' names (both kernels): the
 * instance nearest a core, one instance by index, and every instance of a
 * name with its counts. The m-kernel alone registers (mkernel/ica_services.c). */
#pragma once
#include <formica/syscalls.h>
#include <stdint.h>

/* The pid of the instance of `name` nearest `core` (kernel/instance_choice.h),
 * or 0 when the name has no instance or that one is restarting. */
uint32_t server_pid_nearest(const char *name, uint32_t core);
/* The pid of instance `index` of `name`, or 0. */
uint32_t server_pid_of_instance(const char *name, uint32_t index);
/* Fills up to `room` entries about the instances of `name` in index order;
 * returns how many the name has (0: none). */
uint32_t server_instances_describe(const char *name, struct server_instance_info *out,
                                   uint32_t room);
