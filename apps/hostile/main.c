/* hostile: an ordinary program that tries what issue 12 lists an attacker
 * doing, with the rights the shell gives any program. Every attempt must be
 * refused with the expected error; each prints one @json "hostile" line.
 * `hostile sleeper` only sleeps (the spawn bomb's children). */
#include <formica/device.h>
#include <formica/file.h>
#include <formica/pager.h>
#include <formica/request.h>
#include <formica/rights.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define BOMB_CHILDREN 300 /* more than the process table holds */
#define GROWTH_STEP (4u << 20)
#define SERVER_WAIT_MS 30000 /* the servers may still be starting (FS replays its journal) */

static int failures;

static void expect(const char *name, long result, long wanted)
{
    bool ok = result == wanted;
    failures += !ok;
    printf("@json {\"kind\":\"hostile\",\"case\":\"%s\",\"ok\":%s,\"result\":%ld,\"wanted\":%ld}\n",
           name, ok ? "true" : "false", result, wanted);
}

/* A control ICA with a 4 KiB data ICA of zeros attached, prepared for `operation`. */
static uint64_t zeros_request(uint32_t operation)
{
    static long control = -1, data = -1;
    if (control < 0)
        control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (data < 0)
        data = ica_allocate(ICA_KIND_DATA, 4096);
    request_prepare((uint64_t)control, operation);
    memset(ica_address((uint64_t)data), 0, 4096);
    request_attach((uint64_t)control, (uint64_t)data);
    return (uint64_t)control;
}

static void storage_attacks(void)
{
    long blk = server_wait_for(SERVER_NAME_BLK, SERVER_WAIT_MS),
         dk = server_wait_for(SERVER_NAME_DK, SERVER_WAIT_MS);
    uint64_t control = zeros_request(BLK_WRITE);
    *blk_write_of(ica_control_of(control)) =
        (struct blk_write_message){.first_block = 1, .blocks = 1};
    expect("blk_write_of_metadata", request_call(blk, control), -E_PERMISSION);
    control = zeros_request(DK_WRITE);
    *dk_write_of(ica_control_of(control)) =
        (struct dk_write_message){.first_sector = 8, .sectors = 8};
    expect("dk_write_of_inode_table", request_call(dk, control), -E_PERMISSION);
    control = zeros_request(BLK_SYNC);
    expect("blk_sync", request_call(blk, control), -E_PERMISSION);
    long fs = server_wait_for(SERVER_NAME_FS, SERVER_WAIT_MS);
    control = zeros_request(FS_READBLOCK);
    *fs_readblock_of(ica_control_of(control)) =
        (struct fs_readblock_message){.handle = 12345, .first_block = 0, .blocks = 1};
    long forged = request_call(fs, control); /* out of the table's range, or not its own */
    expect("readblock_with_forged_handle", forged == -E_INVALID ? -E_BAD_HANDLE : forged,
           -E_BAD_HANDLE);
    int fd = open("/hostile.tmp", O_CREAT | O_RDWR);
    const void *data = NULL;
    expect("readblock_at_block_2_52", readblock(fd, 1, 1ull << 52, &data), -E_INVALID);
    close(fd);
    expect("remove_own_file", unlink("/hostile.tmp"), 0);
}

static void pager_attacks(void)
{
    long pager = server_wait_for(SERVER_NAME_PAGER, SERVER_WAIT_MS);
    uint64_t control = zeros_request(PAGER_FAULT);
    *pager_fault_of(ica_control_of(control)) =
        (struct pager_fault_message){.pid = 1, .address = PAGER_REGION_BASE};
    expect("forged_page_fault", request_call(pager, control), -E_PERMISSION);
    control = zeros_request(PAGER_STATS);
    expect("forged_kernel_flag", ica_request(pager, control, ICA_SYNC | 0x80000000u), -E_INVALID);
}

static void server_attacks(void)
{
    const char *names[] = {SERVER_NAME_FS, SERVER_NAME_BLK, SERVER_NAME_DK, SERVER_NAME_PAGER};
    for (unsigned i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "kill_%s", names[i]);
        expect(name, kill_process(server_wait_for(names[i], SERVER_WAIT_MS)), -E_PERMISSION);
    }
    expect("register_name_fs", server_register(SERVER_NAME_FS), -E_PERMISSION);
    expect("kill_init", kill_process(1), -E_PERMISSION);
    expect("power_off", power_off(0), -E_PERMISSION);
}

static void spawn_attacks(void)
{
    expect("spawn_at_server_priority", spawn("spin", "10", CORE_ANY, PRIORITY_SERVER),
           -E_PERMISSION);
    expect("spawn_with_more_rights",
           spawn_with_rights("spin", "10", CORE_ANY, PRIORITY_APPLICATION, 0, RIGHT_ADMIN),
           -E_PERMISSION);
    expect("spawn_new_account",
           spawn_with_flags("spin", "10", CORE_ANY, PRIORITY_APPLICATION, SPAWN_NEW_ACCOUNT),
           -E_PERMISSION);
    expect("spawn_driver",
           spawn_with_flags("spin", "10", CORE_ANY, PRIORITY_APPLICATION, SPAWN_DRIVER),
           -E_PERMISSION);
}

/* Spawns sleepers until the account's quota stops it, then kills them all. */
static void spawn_bomb(void)
{
    static long children[BOMB_CHILDREN];
    long last = 0;
    int count = 0;
    while (count < BOMB_CHILDREN &&
           (last = spawn("hostile", "sleeper", CORE_ANY, PRIORITY_APPLICATION)) > 0)
        children[count++] = last;
    expect("spawn_bomb_stopped_by_quota", last, -E_QUOTA);
    printf("@json {\"kind\":\"hostile_bomb\",\"children\":%d}\n", count);
    for (int i = 0; i < count; i++) {
        kill_process(children[i]);
        wait_process(children[i], NULL);
    }
}

static void memory_hog(void)
{
    long result = 0;
    uint64_t grown = 0;
    while ((result = memory_grow(GROWTH_STEP)) >= 0)
        grown += GROWTH_STEP;
    expect("memory_stopped_by_quota", result, -E_QUOTA);
    printf("@json {\"kind\":\"hostile_memory\",\"grown_bytes\":%lu}\n", (unsigned long)grown);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "sleeper") == 0) {
        sleep_ms(600000);
        return 0;
    }
    storage_attacks();
    pager_attacks();
    server_attacks();
    spawn_attacks();
    spawn_bomb();
    memory_hog();
    printf("@json {\"kind\":\"hostile_done\",\"failures\":%d}\n", failures);
    return failures == 0 ? 0 : 1;
}
