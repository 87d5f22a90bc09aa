/* apps/init: process 1, started by the kernel on core 0. Starts the servers
 * on the cores the placement names, then the shell on core 0; restarts any
 * server that ends (reincarnation.c); when the shell ends, powers the
 * machine off with 0 if the shell succeeded, else 1. */
#include "reincarnation.h"
#include <formica/device.h>
#include <formica/request.h>
#include <formica/rights.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <formica/users.h>
#include <stdio.h>

/* The placement in effect; every server on core 0 if the kernel has none. */
static void read_placement(struct placement_info *placement)
{
    long result = placement_get(placement);
    if (result >= 0)
        return;
    printf("init: no placement (%s); servers go to core 0\n", error_text(result));
    for (int server = 0; server < PLACEMENT_SERVERS; server++) {
        placement->server_core[server] = 0;
        placement->server_instance_count[server] = 1;
        placement->server_instance_cores[server][0] = 0;
    }
}

/* The console shell is the administrator: it may kill, crash and restart
 * servers, start drivers and give programs server priority, but not power
 * off (init does, when the shell ends) nor speak for a server. */
#define SHELL_RIGHTS                                                                               \
    (RIGHTS_USER | RIGHT_SERVER_PRIORITY | RIGHT_ADMIN | RIGHT_NEW_ACCOUNT | RIGHT_DISK |          \
     RIGHT_BLOCK)

/* Runs the shell on core 0 and returns its exit code (1 if it never ran).
 * Meanwhile every server that ends is restarted (reincarnation.c). */
static int run_shell(void)
{
    struct spawn_request request;
    long pid = spawn_request_fill(&request, "shell", NULL, 0, PRIORITY_APPLICATION);
    request.flags = SPAWN_GRANT_DRIVER | SPAWN_SET_USER;
    request.rights = SHELL_RIGHTS;
    request.uid = USER_CONSOLE;
    request.gid = GROUP_USERS;
    if (pid == 0)
        pid = spawn_request_send(&request);
    if (pid < 0) {
        printf("init: cannot start the shell: %s\n", error_text(pid));
        return 1;
    }
    for (;;) {
        int exit_code = 1;
        long ended = wait_any(&exit_code);
        if (ended < 0) {
            printf("init: waiting for the shell failed: %s\n", error_text(ended));
            return 1;
        }
        if (ended == pid)
            return exit_code;
        if (!servers_child_ended(ended, exit_code))
            printf("init: process %ld ended with code %d\n", ended, exit_code);
    }
}

static uint64_t sync_control;

static long prepare_sync(void *context)
{
    (void)context;
    request_prepare(sync_control, FS_SYNC);
    return 0;
}

/* Asks FS to put everything written on the disk (FS_SYNC -> BLK_SYNC), so the
 * image is clean after power-off; an FS being restarted is waited for.
 * Skipped when FS never registered (no disk: it may still be giving up). */
static void sync_disk(void)
{
    bool restarted = servers_restart_count(SERVER_FS) > 0;
    long fs = restarted ? server_wait_for(SERVER_NAME_FS, SERVER_RESTART_WAIT_MS)
                        : server_lookup(SERVER_NAME_FS);
    long control = fs < 0 ? fs : ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0)
        return;
    sync_control = (uint64_t)control;
    long result = request_call_retrying(SERVER_NAME_FS, &fs, sync_control, prepare_sync, NULL);
    if (result < 0)
        printf("init: sync before power-off failed: %s\n", error_text(result));
}

int main(void)
{
    struct placement_info placement;
    read_placement(&placement);
    servers_start(&placement);
    int shell_code = run_shell();
    servers_restart_ended(); /* a server that ended with the shell is needed for the sync */
    sync_disk();
    printf("init: shell exited with code %d; powering off\n", shell_code);
    power_off(shell_code == 0 ? 0 : 1);
    return 1; /* not reached: init holds RIGHT_POWER_OFF */
}
