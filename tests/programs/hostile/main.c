/* hostile: an ordinary program that tries what issue 12 lists an attacker
 * doing, with the rights the shell gives any program. Every attempt must be
 * refused with the expected error; each prints one @json "hostile" line.
 * `hostile sleeper` only sleeps (the spawn bomb's children), `hostile reader`
 * reads the pinned file, `hostile pin LIMIT` tries only the cache pinning,
 * `hostile holdfs MS` holds a block FS lent on (test_fs_lends_on.py),
 * `hostile keeplends MODE` and `hostile secret MODE` keep lent pages past
 * their blocks' end while another user writes (stale_lends.c),
 * `hostile nostats` (spawned without RIGHT_STATISTICS) asks for the pager's report,
 * `hostile entry ADDRESS [RETURN]` jumps to the kernel's `syscall` entry at ADDRESS
 * (with RCX = RETURN: a return address the kernel must refuse);
 * `hostile regions ...` takes published regions (regions.c);
 * `icaflood`, `ringflood` and `hog` flood the ICA pools, the servers' rings
 * and a core (floods.c); `weight` tries SYS_SHARE_WEIGHT (share_weight.c); the modes
 * of hostile.h attack other users' files and the
 * servers' shares (tests/integration/test_ownership.py). */
#include "floods.h"
#include "hostile.h"
#include <formica/device.h>
#include <formica/file.h>
#include <formica/pager.h>
#include <formica/protocol/boot_servers.h>
#include <formica/request.h>
#include <formica/rights.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOMB_CHILDREN 300 /* more than the process table holds */
#define GROWTH_STEP (4u << 20)
#define SERVER_WAIT_MS 30000 /* the servers may still be starting (FS replays its journal) */
#define PIN_FILE_BYTES (64u * 1024)
#define PIN_BLOCKS_PER_REQUEST 4u /* BLK lends at most ICA_MAX_ATTACHED blocks per request */
#define PIN_REQUESTS 40           /* 160 blocks asked for: more than the limit */
#define PIN_LIMIT 64u             /* BLK's default lend limit per client (cache_lends.h) */

static int failures;

void expect(const char *name, long result, long wanted)
{
    bool ok = result == wanted;
    failures += !ok;
    printf("@json {\"kind\":\"hostile\",\"case\":\"%s\",\"ok\":%s,\"result\":%ld,\"wanted\":%ld}\n",
           name, ok ? "true" : "false", result, wanted);
}

int hostile_failures(void)
{
    return failures;
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

/* `hostile nostats`: PAGER_REPORT (the shell's pagerstat) without RIGHT_STATISTICS. */
static int report_without_the_right(void)
{
    long pager = server_wait_for(SERVER_NAME_PAGER, SERVER_WAIT_MS);
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    long result = pager < 0 || control < 0
                      ? -E_NOT_FOUND
                      : request_operation(pager, (uint64_t)control, PAGER_REPORT);
    expect("pager_report_without_statistics_right", result, -E_PERMISSION);
    return failures == 0 ? 0 : 1;
}

/* A child with every user right but RIGHT_STATISTICS: its refusal is its exit code. */
static void statistics_attack(void)
{
    long child = spawn_with_rights("hostile", "nostats", CORE_ANY, PRIORITY_APPLICATION, 0,
                                   RIGHTS_USER & ~RIGHT_STATISTICS);
    int code = -1;
    if (child > 0)
        wait_process(child, &code);
    expect("child_without_statistics_right_refused", child > 0 ? code : child, 0);
}

static void server_attacks(void)
{
    struct placement_info placement;
    bool placed = placement_get(&placement) >= 0;
    for (int server = 0; server < PLACEMENT_SERVERS; server++) { /* every server init starts */
        if (placed && placement.server_instance_count[server] == 0)
            continue; /* an optional server this placement does not start */
        const char *server_name = boot_servers[server].name;
        char name[32];
        snprintf(name, sizeof name, "kill_%s", server_name);
        expect(name, kill_process(server_wait_for(server_name, SERVER_WAIT_MS)), -E_PERMISSION);
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

/* The kernel may not write into a program's code: text is mapped read-only
 * (the loader once mapped every segment writable). */
static void code_attacks(void)
{
    struct process_info *code = (struct process_info *)(uintptr_t)&expect;
    expect("kernel_write_into_code", process_list(code, 1), -E_FAULT);
}

/* FS_READBLOCK requests whose lent blocks are kept (each control ICA is held,
 * so its lend lasts): BLK must stop lending at the client's limit and copy. */
static long pinned_handle(void)
{
    int fd = open("/hostile.pin", O_CREAT | O_RDWR);
    static char block[PIN_FILE_BYTES];
    memset(block, 'p', sizeof block);
    long written = fd < 0 ? fd : pwrite(fd, block, sizeof block, 0);
    if (fd >= 0)
        close(fd);
    if (written < 0)
        return written;
    long fs = server_wait_for(SERVER_NAME_FS, SERVER_WAIT_MS);
    uint64_t control = zeros_request(FS_OPEN);
    *fs_open_of(ica_control_of(control)) = (struct fs_open_message){.flags = FS_OPEN_READ};
    memcpy(ica_control_of(control)->payload, "/hostile.pin", sizeof "/hostile.pin");
    return request_call(fs, control);
}

static void pin_cache(uint32_t limit)
{
    long fs = server_wait_for(SERVER_NAME_FS, SERVER_WAIT_MS), handle = pinned_handle();
    long data = ica_allocate(ICA_KIND_DATA, PIN_BLOCKS_PER_REQUEST * STORAGE_BLOCK_BYTES);
    uint32_t lent = 0, copied = 0;
    for (int i = 0; i < PIN_REQUESTS && handle >= 0 && data >= 0; i++) {
        long control = ica_allocate(ICA_KIND_CONTROL, 4096);
        if (control < 0)
            break;
        request_prepare((uint64_t)control, FS_READBLOCK);
        *fs_readblock_of(ica_control_of((uint64_t)control)) = (struct fs_readblock_message){
            .handle = (uint64_t)handle,
            .first_block = (uint64_t)(i % (PIN_FILE_BYTES / STORAGE_BLOCK_BYTES / 4)) * 4,
            .blocks = PIN_BLOCKS_PER_REQUEST};
        request_attach((uint64_t)control, (uint64_t)data);
        if (request_call(fs, (uint64_t)control) < 0)
            break;
        uint32_t count = ica_control_of((uint64_t)control)->lent_count;
        lent += count;
        copied += count == 0;
    }
    printf("@json {\"kind\":\"hostile_pin\",\"lent\":%u,\"copied_requests\":%u}\n", lent, copied);
    expect("pin_cache_stopped_at_lend_limit", lent <= limit && copied > 0, 1);
    long reader = spawn("hostile", "reader", CORE_ANY, PRIORITY_APPLICATION);
    int code = -1;
    if (reader > 0)
        wait_process(reader, &code);
    expect("others_read_while_pinned", code, 0);
    unlink("/hostile.pin");
}

/* `hostile holdfs MS`: keeps FS's answer to a one-block readblock (the
 * block FS borrows from BLK, lent on to it) for MS milliseconds while
 * others read; FS must not let that block go meanwhile, or one program
 * could make FS hold more of BLK's cache than its slots (docs/storage.md,
 * "FS lends on what it borrows"). Prints the block's lend count before and
 * after: FS's lend and this one's, 2 both times. */
static int hold_fs_lend(uint64_t milliseconds)
{
    long fs = server_wait_for(SERVER_NAME_FS, SERVER_WAIT_MS), handle = pinned_handle();
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (fs < 0 || handle < 0 || control < 0)
        return 1;
    struct ica_control *page = ica_control_of((uint64_t)control);
    request_prepare((uint64_t)control, FS_READBLOCK);
    *fs_readblock_of(page) =
        (struct fs_readblock_message){.handle = (uint64_t)handle, .first_block = 0, .blocks = 1};
    long result = request_call(fs, (uint64_t)control);
    if (result < 0 || page->result != STORAGE_BLOCK_BYTES || page->lent_count != 1)
        return 1;
    uint64_t block = page->lent[0];
    long before = ica_lend_count(block);
    sleep_ms(milliseconds);
    long after = ica_lend_count(block);
    printf("@json {\"kind\":\"hostile_hold\",\"before\":%ld,\"after\":%ld}\n", before, after);
    return 0;
}

/* `hostile reader`: reads a file block by block through readblock (lends). */
static bool read_blocks_of(int fd)
{
    const void *data = NULL;
    for (uint64_t block = 0; block < PIN_FILE_BYTES / STORAGE_BLOCK_BYTES; block++)
        if (readblock(fd, 1, block, &data) != STORAGE_BLOCK_BYTES || ((const char *)data)[0] != 'p')
            return false;
    return true;
}

/* `hostile reader [MS]`: the file read; with MS, read again through the
 * same handle MS milliseconds later (a BLK killed meanwhile:
 * test_fs_lends_on.py). */
static int read_pinned_file(int argc, char **argv)
{
    int fd = open("/hostile.pin", O_RDONLY);
    if (fd < 0 || !read_blocks_of(fd))
        return 1;
    if (argc < 3)
        return 0;
    sleep_ms(strtoul(argv[2], NULL, 10));
    return read_blocks_of(fd) ? 0 : 1;
}

static void memory_hog(void)
{
    /* a heap that would reach the pager region and the ICA windows above it:
     * refused by its end, before any quota is asked */
    expect("memory_below_the_windows", memory_grow(PAGER_REGION_BASE), -E_NO_MEMORY);
    long result = 0;
    uint64_t grown = 0;
    while ((result = memory_grow(GROWTH_STEP)) >= 0)
        grown += GROWTH_STEP;
    expect("memory_stopped_by_quota", result, -E_QUOTA);
    printf("@json {\"kind\":\"hostile_memory\",\"grown_bytes\":%lu}\n", (unsigned long)grown);
}

/* A jump straight to the kernel's `syscall` entry, as the CPU would land there
 * but still in user mode, asking in R11 for the flags IOPL 3 and NT: the
 * kernel serves it as the call in RAX (kernel/syscall.c, syscall_entry_fault)
 * and returns to RCX with only the flags a user may set. */
static void entry_jump(uint64_t entry)
{
    long result;
    uint64_t flags;
    __asm__ volatile("lea 1f(%%rip), %%rcx\n\t"
                     "mov $0x7202, %%r11\n\t" /* IF, IOPL 3, NT */
                     "jmp *%[entry]\n"
                     "1:\n\t"
                     "pushfq\n\t"
                     "pop %[flags]"
                     : "=a"(result), [flags] "=r"(flags)
                     : "a"((long)SYS_PROCESS_ID), [entry] "r"(entry)
                     : "rcx", "r11", "memory", "cc");
    expect("entry_jump_is_a_system_call", result, process_id());
    expect("entry_jump_gives_no_privileged_flags", (long)(flags & 0x7000), 0);
}

/* The same jump, with RCX = `return_address` (one a program may not return
 * to: at or above USER_SPACE_END, or not canonical) and the call a console
 * write of ENTRY_CALL_SERVED: the kernel must end the process (exit code
 * 128 + 13) before it serves the call or returns to that address. */
#define ENTRY_CALL_SERVED "entry: the call was served\n"
static void entry_jump_returning_to(uint64_t entry, uint64_t return_address)
{
    static const char served[] = ENTRY_CALL_SERVED;
    printf("@json {\"kind\":\"hostile_entry\",\"return_address\":\"0x%lx\"}\n",
           (unsigned long)return_address);
    fflush_console();
    __asm__ volatile("mov %[flags], %%r11\n\t"
                     "jmp *%[entry]"
                     :
                     : "a"((long)SYS_CONSOLE_WRITE), "D"(served), "S"(sizeof served - 1),
                       "c"(return_address), [flags] "i"(0x202), [entry] "r"(entry)
                     : "r11", "memory");
    __builtin_unreachable();
}

int main(int argc, char **argv)
{
    if (argc > 3 && strcmp(argv[1], "entry") == 0)
        entry_jump_returning_to(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));
    if (argc > 2 && strcmp(argv[1], "entry") == 0) {
        entry_jump(strtoul(argv[2], NULL, 0));
        return failures == 0 ? 0 : 1;
    }
    if (argc > 1 && strcmp(argv[1], "icaflood") == 0)
        return hostile_ica_flood(argc, argv);
    if (argc > 1 && strcmp(argv[1], "icahold") == 0)
        return hostile_ica_hold(argc, argv);
    if (argc > 1 && strcmp(argv[1], "ringflood") == 0)
        return hostile_ring_flood(argc, argv);
    if (argc > 1 && strcmp(argv[1], "ringchild") == 0)
        return hostile_ring_child(argc, argv);
    if (argc > 1 && strcmp(argv[1], "hog") == 0)
        return hostile_core_hog(argc, argv);
    if (argc > 1 && strcmp(argv[1], "weight") == 0)
        return try_share_weights(argc > 2 ? argv[2] : NULL);
    if (argc > 1 && strcmp(argv[1], "sleeper") == 0) {
        sleep_ms(600000);
        return 0;
    }
    if (argc > 2 && strcmp(argv[1], "holdfs") == 0)
        return hold_fs_lend(strtoul(argv[2], NULL, 10));
    if (argc > 1 && strcmp(argv[1], "reader") == 0)
        return read_pinned_file(argc, argv);
    if (argc > 2 && strcmp(argv[1], "keeplends") == 0)
        return keep_lends_past_truncate(argv[2]);
    if (argc > 2 && strcmp(argv[1], "secret") == 0)
        return write_secret_after_truncate(argv[2]);
    if (argc > 2 && strcmp(argv[1], "raceread") == 0)
        return read_during_free(argv[2]);
    if (argc > 2 && strcmp(argv[1], "racefree") == 0)
        return free_during_read(argv[2]);
    if (argc > 1 && strcmp(argv[1], "nostats") == 0)
        return report_without_the_right();
    if (argc > 2 && strcmp(argv[1], "pin") == 0) { /* `hostile pin LIMIT`: only that attack */
        pin_cache((uint32_t)strtoul(argv[2], NULL, 10));
        return failures == 0 ? 0 : 1;
    }
    if (argc > 1 && strcmp(argv[1], "victim") == 0)
        return make_victim_files();
    if (argc > 1 && strcmp(argv[1], "owners") == 0)
        return attack_owners();
    if (argc > 2 && strcmp(argv[1], "handles") == 0)
        return take_all_handles(strtoul(argv[2], NULL, 10));
    if (argc > 2 && strcmp(argv[1], "holder") == 0)
        return hold_handles(strtoul(argv[2], NULL, 10));
    if (argc > 2 && strcmp(argv[1], "fill") == 0)
        return fill_disk(argv[2], argc > 3 ? argv[3] : NULL);
    if (argc > 2 && strcmp(argv[1], "normal") == 0)
        return normal_program((uint32_t)strtoul(argv[2], NULL, 10));
    if (argc > 2 && strcmp(argv[1], "swapper") == 0)
        return swap_across_full_disk(argv[2]);
    if (argc > 1 && strcmp(argv[1], "newregion") == 0)
        return new_region_on_full_disk();
    if (argc > 2 && strcmp(argv[1], "await") == 0)
        return await_mark(argv[2], argc > 3 ? strtoul(argv[3], NULL, 10) : 0);
    if (argc > 4 && strcmp(argv[1], "regions") == 0)
        return take_regions(argv[2], (uint32_t)strtoul(argv[3], NULL, 10),
                            strtoul(argv[4], NULL, 0), argc > 5 ? argv[5] : NULL);
    if (argc > 4 && strcmp(argv[1], "region") == 0)
        return hold_region(argv[2], strtoul(argv[3], NULL, 0), (long)strtol(argv[4], NULL, 10));
    storage_attacks();
    pager_attacks();
    statistics_attack();
    server_attacks();
    spawn_attacks();
    code_attacks();
    pin_cache(PIN_LIMIT);
    spawn_bomb();
    memory_hog();
    printf("@json {\"kind\":\"hostile_done\",\"failures\":%d}\n", failures);
    return failures == 0 ? 0 : 1;
}
