/* common.c: icatest's shared steps: reporting a case, starting and stopping
 * servers and helper copies of icatest, time and the ICA pool check. */
#include "icatest.h"
#include <formica/storage.h>
#include <stdio.h>

bool report_case(const char *name, bool ok, long got, long want)
{
    printf("@json {\"kind\":\"icatest\",\"case\":\"%s\",\"ok\":%s,\"got\":%ld,\"want\":%ld}\n",
           name, ok ? "true" : "false", got, want);
    return ok;
}

uint32_t online_cores(void)
{
    struct core_info cores[64];
    long count = core_list(cores, 64);
    return count > 0 ? (uint32_t)count : 1;
}

void wait_for_boot_servers(void)
{
    server_wait_for(SERVER_NAME_FS, SERVER_START_WAIT_MS);
}

long start_server(const char *program, const char *arguments, uint32_t core, const char *name)
{
    long pid = spawn(program, arguments, core, PRIORITY_SERVER);
    if (pid < 0)
        return pid;
    long found = server_wait_for(name, 5000);
    return found == pid ? pid : (found < 0 ? found : -E_EXISTS);
}

int stop_ipcserver(long pid)
{
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control >= 0) {
        request_operation(pid, (uint64_t)control, IPC_EXIT);
        ica_free((uint64_t)control);
    }
    int code = -1;
    wait_process(pid, &code);
    return code;
}

int run_helper(const char *arguments, uint32_t core)
{
    long pid = spawn("icatest", arguments, core, PRIORITY_APPLICATION);
    int code = -1;
    if (pid >= 0)
        wait_process(pid, &code);
    return code;
}

uint64_t now_us(void)
{
    struct clock_info clock;
    if (clock_get(&clock) != 0 || clock.tsc_hz == 0)
        return 0;
    return read_timestamp_counter() / (clock.tsc_hz / 1000000);
}

bool pools_return_to(const struct ica_stats *start, uint64_t milliseconds, struct ica_stats *now)
{
    for (uint64_t waited = 0;; waited += 10) {
        ica_stats(now);
        if (now->control_free == start->control_free && now->data_free == start->data_free &&
            now->block_free == start->block_free)
            return true;
        if (waited >= milliseconds)
            return false;
        sleep_ms(10);
    }
}
