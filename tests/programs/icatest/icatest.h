/* icatest.h: what the parts of icatest share: the ipcserver operations, the
 * @json case report, and starting/stopping servers and helper processes. */
#pragma once
#include <formica/ipc_test.h>
#include <formica/request.h>
#include <formica/user.h>
#include <stdbool.h>
#include <stdint.h>

#define FAULT_EXIT_CODE (128 + 14) /* a process killed by a page fault */

/* Prints one @json icatest line for `name`; returns ok. */
bool report_case(const char *name, bool ok, long got, long want);
/* Waits until the boot's storage servers have started (FS registers last,
 * after its mount, with a disk or without): they take their ICAs while
 * they start, which must not land inside a test's pool counts. */
void wait_for_boot_servers(void);
/* The number of online cores. */
uint32_t online_cores(void);
/* Starts `program arguments` on `core` as a server and waits until it
 * registered `name`; returns its pid or an error. */
long start_server(const char *program, const char *arguments, uint32_t core, const char *name);
/* Sends IPC_EXIT to ipcserver `pid` and waits for it to end; its exit code. */
int stop_ipcserver(long pid);
/* Runs `icatest arguments` on `core` and waits; its exit code (-1 if it did not start). */
int run_helper(const char *arguments, uint32_t core);
/* Microseconds since boot from the TSC. */
uint64_t now_us(void);
/* Waits up to `milliseconds` for the counts of all three pools (control, data,
 * block) to equal `start`; true if they do. */
bool pools_return_to(const struct ica_stats *start, uint64_t milliseconds, struct ica_stats *now);

int stress_main(int argc, char **argv);
int client_main(int argc, char **argv);
int bad_main(int argc, char **argv);
int helper_main(int argc, char **argv);
int lend_main(int argc, char **argv);
int route_main(int argc, char **argv);
int lend_write_role(char **argv);
/* lend_on.c: lending on a borrowed block ICA; its cases (run by `lend`) and roles. */
bool lend_on_cases(void);
int block_lender_role(char **argv);
int lend_on_middle_role(char **argv);
int lend_on_peek_role(char **argv);
int published_main(int argc, char **argv);
/* The published region's helper roles; -1 for a role that is not one. */
int published_role(const char *role, char **argv);
