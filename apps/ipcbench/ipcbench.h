/* ipcbench.h: one benchmark case of ipcbench (what is measured, where the
 * servers sit) and the timing loop shared by all cases. */
#pragma once
#include <formica/ipc_test.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdbool.h>
#include <stdint.h>

struct bench_case {
    const char *name;
    const char *placement; /* "same-core", "cross-core" or "#1".."#5" */
    uint64_t bytes;        /* data handed over per request (0: none) */
    long server;           /* where requests go */
    uint64_t control, data;
    const uint8_t *source; /* copy_into_ica: the private buffer copied each time */
    long expected;         /* the result every request must give */
    long (*one_request)(struct bench_case *bench);
};

/* Times `requests` requests after a warm-up and prints the case's @json line;
 * false if a request failed. */
bool measure(struct bench_case *bench, long requests);
/* Starts `ipcserver arguments` on `core` as server `name`; its pid or an error. */
long start_ipcserver(const char *name, const char *arguments, uint32_t core);
void stop_ipcserver(long pid);
