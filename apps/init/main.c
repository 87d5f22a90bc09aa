/* apps/init: process 1, started by the kernel on core 0. Starts the servers
 * on the cores the placement names, then the shell on core 0; when the shell
 * ends, powers the machine off with 0 if the shell succeeded, else 1. */
#include <formica/device.h>
#include <formica/request.h>
#include <formica/rights.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>

static const char *const server_programs[PLACEMENT_SERVERS] = {
    [SERVER_FS] = "fs",
    [SERVER_BLK] = "blk",
    [SERVER_DK] = "dk",
    [SERVER_PAGER] = "pager",
};

/* The placement in effect; every server on core 0 if the kernel has none. */
static void read_placement(struct placement_info *placement)
{
    long result = placement_get(placement);
    if (result >= 0)
        return;
    printf("init: no placement (%s); servers go to core 0\n", error_text(result));
    for (int server = 0; server < PLACEMENT_SERVERS; server++)
        placement->server_core[server] = 0;
}

/* What each server may do (docs/authority.md): its reserved name, and only
 * the data path below it: FS asks BLK, BLK asks DK, the pager asks FS. */
static const uint32_t server_rights[PLACEMENT_SERVERS] = {
    [SERVER_FS] = RIGHT_RESERVED_NAME | RIGHT_BLOCK | RIGHT_STATISTICS,
    [SERVER_BLK] = RIGHT_RESERVED_NAME | RIGHT_DISK | RIGHT_STATISTICS,
    [SERVER_DK] = RIGHT_RESERVED_NAME,
    [SERVER_PAGER] = RIGHT_RESERVED_NAME | RIGHT_FILE,
};

/* The console shell is the administrator: it may kill and restart servers
 * and give programs server priority, but not power off (init does, when the
 * shell ends) nor speak for a server. */
#define SHELL_RIGHTS                                                                               \
    (RIGHTS_USER | RIGHT_SERVER_PRIORITY | RIGHT_ADMIN | RIGHT_NEW_ACCOUNT | RIGHT_DISK |          \
     RIGHT_BLOCK)

static void start_servers(const struct placement_info *placement)
{
    for (int server = 0; server < PLACEMENT_SERVERS; server++) {
        const char *program = server_programs[server];
        uint32_t core = placement->server_core[server];
        /* DK drives the disks; the pager maps the NVDIMM (SYS_DEVICE_MAP). */
        uint32_t flags = server == SERVER_DK || server == SERVER_PAGER ? SPAWN_DRIVER : 0;
        long pid =
            spawn_with_rights(program, NULL, core, PRIORITY_SERVER, flags, server_rights[server]);
        if (pid < 0)
            printf("init: cannot start %s on core %u: %s\n", program, core, error_text(pid));
    }
}

/* Runs the shell on core 0 and returns its exit code (1 if it never ran). */
static int run_shell(void)
{
    /* The shell may start drivers (`run --driver`). */
    long pid =
        spawn_with_rights("shell", NULL, 0, PRIORITY_APPLICATION, SPAWN_GRANT_DRIVER, SHELL_RIGHTS);
    if (pid < 0) {
        printf("init: cannot start the shell: %s\n", error_text(pid));
        return 1;
    }
    int exit_code = 1;
    long result = wait_process(pid, &exit_code);
    if (result < 0) {
        printf("init: waiting for the shell failed: %s\n", error_text(result));
        return 1;
    }
    return exit_code;
}

/* Asks FS to put everything written on the disk (FS_SYNC -> BLK_SYNC), so the
 * image is clean after power-off. Skipped when FS never registered. */
static void sync_disk(void)
{
    long fs = server_lookup(SERVER_NAME_FS);
    long control = fs < 0 ? fs : ica_allocate(ICA_KIND_CONTROL, 4096);
    if (control < 0)
        return;
    long result = request_operation(fs, (uint64_t)control, FS_SYNC);
    if (result < 0)
        printf("init: sync before power-off failed: %s\n", error_text(result));
}

int main(void)
{
    struct placement_info placement;
    read_placement(&placement);
    start_servers(&placement);
    int shell_code = run_shell();
    sync_disk();
    printf("init: shell exited with code %d; powering off\n", shell_code);
    power_off(shell_code == 0 ? 0 : 1);
    return 1; /* not reached: init holds RIGHT_POWER_OFF */
}
