/* instance.h: a server that runs as several instances (docs/design.md,
 * "Server instances"): the --instance I/N argument init passes each one,
 * registration and lookup of one instance, and the name of its kept region. */
#pragma once
#include <formica/syscalls.h>
#include <stddef.h>
#include <stdint.h>

/* Which instance a process is: index of count (0 of 1 for a lone server). */
struct server_instance {
    uint32_t index, count;
};

/* Reads "--instance I/N" from argv (either as one argument "--instance=I/N"
 * or as two); absent: 0 of 1. Returns 0, or -E_INVALID (with a log line)
 * when it is malformed: not two decimal numbers, N = 0, I >= N or
 * N > SERVER_INSTANCES_MAX. */
int server_instance_parse(int argc, char **argv, struct server_instance *out);

/* Writes "--instance I/N" (init's spawn arguments) into buffer; returns its
 * length, or -E_TOO_BIG when it does not fit. */
long server_instance_argument(struct server_instance instance, char *buffer, size_t size);

/* Registers the caller as instance `index` of server `name`. */
long server_register_instance(const char *name, uint32_t index);
/* The pid of instance `index` of `name`; -E_NOT_FOUND while it is not registered. */
long server_lookup_instance(const char *name, uint32_t index);
/* server_lookup_instance, retried for up to `milliseconds` while it starts. */
long server_wait_for_instance(const char *name, uint32_t index, uint64_t milliseconds);
/* After instance `index`'s process `gone` ended (a request to it failed with
 * -E_SERVER_ENDED or -E_NOT_FOUND): the pid of its restarted process, waited
 * for up to SERVER_RESTART_WAIT_MS; -E_SERVER_ENDED when it did not come back
 * (server_reconnect for one instance: formica/request.h). */
long server_reconnect_instance(const char *name, uint32_t index, long gone);
/* Fills up to `count` entries about the instances of `name` (index order);
 * returns how many, or -E_NOT_FOUND when the name has none. */
long server_instance_counts(const char *name, struct server_instance_info *buffer, uint32_t count);

/* The name of instance `index`'s kept region: `name` itself for instance 0
 * (a lone server keeps the name it always had), "name.index" otherwise.
 * Returns 0, or -E_TOO_BIG when that does not fit `size` (KEPT_NAME_BYTES). */
long server_instance_kept_name(const char *name, uint32_t index, char *buffer, size_t size);
