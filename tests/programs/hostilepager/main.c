/* hostilepager: an ordinary program, run as another user (`run --user 2001`),
 * that attacks the pager's sharing (docs/authority.md, issue 29): regions of
 * 8-64 GiB (`tables`), block tables its account cannot pay for (`charge`,
 * under run --memory 1M), most of the NVM (`backend BYTES`), persistent keys
 * holding most of the NVM (`keys BYTES`), another user's
 * persistent NVM key (`key K`), every
 * client slot (`slots MS`), more memory than its account's quota (`quota
 * BYTES`), and, run as uid 0, overwriting a swap file under a client
 * (`corrupt PATH BYTES`). Each check prints one @json "hostile_pager" line. */
#include <formica/file.h>
#include <formica/pager.h>
#include <formica/request.h>
#include <formica/size.h>
#include <formica/teramem.h>
#include <formica/user.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVER_WAIT_MS 30000
#define SLOT_CHILDREN 8      /* twice an account's share (a quarter of 16) */
#define EXIT_REFUSED_QUOTA 3 /* a slot child refused with -E_QUOTA */
#define EXIT_REFUSED_OTHER 4
#define CORRUPT_WAIT_MS 60000
#define CORRUPT_CHUNK (64u << 10)

static int failures;

static void expect(const char *name, bool ok, long result)
{
    failures += !ok;
    printf("@json {\"kind\":\"hostile_pager\",\"case\":\"%s\",\"ok\":%s,\"result\":%ld}\n", name,
           ok ? "true" : "false", result);
}

/* memory_bytes of the first process called `name`, or of `pid` when name is NULL. */
static uint64_t memory_of(const char *name, long pid)
{
    static struct process_info list[PROCESS_LIST_MAX];
    long count = process_list(list, PROCESS_LIST_MAX);
    for (long i = 0; i < count; i++)
        if (name != NULL ? strcmp(list[i].name, name) == 0 : list[i].pid == (uint32_t)pid)
            return list[i].memory_bytes;
    return 0;
}

/* A PAGER_INIT sent straight to the pager (no region asked of the kernel first). */
static long raw_init(uint64_t bytes, uint32_t block_bytes, uint32_t backend)
{
    static long control = -1;
    long pager = server_wait_for(SERVER_NAME_PAGER, SERVER_WAIT_MS);
    if (control < 0)
        control = ica_allocate(ICA_KIND_CONTROL, 4096);
    if (pager < 0 || control < 0)
        return pager < 0 ? pager : control;
    request_prepare((uint64_t)control, PAGER_INIT);
    *pager_init_of(ica_control_of((uint64_t)control)) = (struct pager_init_message){
        .base = PAGER_REGION_BASE,
        .bytes = bytes,
        .limit_bytes = 1u << 20,
        .block_bytes = block_bytes,
        .policy = PAGER_POLICY_LRU,
        .backend = backend,
    };
    return request_call(pager, (uint64_t)control);
}

/* `tables`: regions of 8-64 GiB are refused before the pager allocates
 * anything; a region it takes is charged to this account and given back. */
static void table_attacks(void)
{
    uint64_t pager_before = memory_of("pager", 0);
    static const uint32_t blocks[] = {4096, 65536, 1u << 20};
    for (uint64_t gib = 8; gib <= 64; gib *= 2)
        for (unsigned b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
            long result = raw_init(gib << 30, blocks[b], PAGER_BACKEND_NVM);
            char name[64];
            snprintf(name, sizeof name, "region_%luG_blocks_%uK_refused", gib, blocks[b] >> 10);
            expect(name, result < 0, result);
        }
    uint64_t pager_after = memory_of("pager", 0);
    printf("@json {\"kind\":\"hostile_pager_tables\",\"pager_memory_before\":%lu,"
           "\"pager_memory_after\":%lu}\n",
           pager_before, pager_after);
    expect("refused_regions_leave_the_pager_memory_alone", pager_after == pager_before,
           (long)(pager_after - pager_before));
    struct teramem_options o = {.local_limit_bytes = 256 << 10,
                                .block_bytes = 4096,
                                .backend = PAGER_BACKEND_NVM,
                                .capacity_bytes = 32 << 20};
    long result = teramem_init(&o);
    uint64_t charged = memory_of(NULL, process_id());
    if (result >= 0)
        teramem_cleanup();
    uint64_t released = memory_of(NULL, process_id());
    printf("@json {\"kind\":\"hostile_pager_charge\",\"memory_with_region\":%lu,"
           "\"memory_after_cleanup\":%lu,\"blocks\":%lu}\n",
           charged, released, (uint64_t)(32 << 20) / 4096);
    expect("region_taken", result >= 0, result);
}

/* `charge` (run --memory 1M): a 64 GiB region in 1 MiB blocks needs about
 * 1.7 MiB of block tables, more than the account has left: -E_QUOTA before
 * the pager allocates them. */
static void charge_attack(void)
{
    uint64_t pager_before = memory_of("pager", 0);
    long result = raw_init(64ull << 30, 1u << 20, PAGER_BACKEND_NVM);
    expect("tables_beyond_the_account_quota_refused", result == -E_QUOTA, result);
    uint64_t pager_after = memory_of("pager", 0);
    expect("unpaid_tables_leave_the_pager_memory_alone", pager_after == pager_before,
           (long)(pager_after - pager_before));
}

/* `backend BYTES`: a region of more than three quarters of the NVM. */
static void backend_attack(uint64_t bytes)
{
    struct teramem_options o = {.local_limit_bytes = 1 << 20,
                                .block_bytes = 64 << 10,
                                .backend = PAGER_BACKEND_NVM,
                                .capacity_bytes = bytes};
    long result = teramem_init(&o);
    if (result >= 0)
        teramem_cleanup();
    expect("most_of_a_backend_refused", result == -E_QUOTA, result);
}

/* `keys BYTES`: two persistent keys of BYTES each, kept after cleanup:
 * the second is refused once the user's keys would hold more than half the
 * NVM. */
static void keys_attack(uint64_t bytes)
{
    long results[2];
    for (int i = 0; i < 2; i++) {
        struct teramem_options o = {.local_limit_bytes = 1 << 20,
                                    .block_bytes = 64 << 10,
                                    .backend = PAGER_BACKEND_NVM,
                                    .capacity_bytes = bytes,
                                    .persistent_key = 2001000 + (uint64_t)i};
        results[i] = teramem_init(&o);
        if (results[i] >= 0)
            teramem_cleanup();
    }
    expect("first_key_taken", results[0] >= 0, results[0]);
    expect("keys_beyond_half_the_nvm_refused", results[1] == -E_QUOTA, results[1]);
}

/* `key K`: another user's persistent key is not reattached. */
static void key_attack(uint64_t key)
{
    struct teramem_options o = {.local_limit_bytes = 256 << 10,
                                .block_bytes = 16 << 10,
                                .backend = PAGER_BACKEND_NVM,
                                .capacity_bytes = 1 << 20,
                                .persistent_key = key};
    long result = teramem_init(&o);
    if (result >= 0)
        teramem_cleanup();
    expect("other_users_key_refused", result == -E_PERMISSION, result);
}

/* `hold MS`: one slot child: a small region held for MS milliseconds. */
static int hold_slot(uint64_t milliseconds)
{
    struct teramem_options o = {.local_limit_bytes = 64 << 10,
                                .block_bytes = 16 << 10,
                                .backend = PAGER_BACKEND_NVM,
                                .capacity_bytes = 256 << 10};
    long result = teramem_init(&o);
    if (result < 0)
        return result == -E_QUOTA ? EXIT_REFUSED_QUOTA : EXIT_REFUSED_OTHER;
    sleep_ms(milliseconds);
    teramem_cleanup();
    return 0;
}

/* `slots MS`: twice the account's share of the pager's slots asked at once. */
static void slot_attack(const char *hold_ms)
{
    char arguments[32];
    snprintf(arguments, sizeof arguments, "hold %s", hold_ms);
    long children[SLOT_CHILDREN];
    int granted = 0, refused = 0, other = 0;
    for (int i = 0; i < SLOT_CHILDREN; i++)
        children[i] = spawn("hostilepager", arguments, CORE_ANY, PRIORITY_APPLICATION);
    for (int i = 0; i < SLOT_CHILDREN; i++) {
        int code = -1;
        if (children[i] > 0)
            wait_process(children[i], &code);
        granted += code == 0;
        refused += code == EXIT_REFUSED_QUOTA;
        other += code != 0 && code != EXIT_REFUSED_QUOTA;
    }
    printf("@json {\"kind\":\"hostile_pager_slots\",\"granted\":%d,\"refused_quota\":%d,"
           "\"other\":%d}\n",
           granted, refused, other);
    expect("slots_stopped_at_the_account_share", granted == 4 && refused == 4, granted);
}

/* `quota BYTES`: a region and a local limit larger than the account's quota
 * (run --memory BYTES): written whole and read back, the account never over. */
static void quota_attack(uint64_t quota)
{
    uint64_t size = 2 * quota;
    struct teramem_options o = {.local_limit_bytes = size,
                                .block_bytes = 64 << 10,
                                .backend = PAGER_BACKEND_NVM,
                                .capacity_bytes = size};
    long result = teramem_init(&o);
    uint8_t *area = result >= 0 ? teramalloc(size) : NULL;
    uint64_t peak = 0, mismatches = 0;
    for (uint64_t offset = 0; area != NULL && offset < size; offset += 4096) {
        area[offset] = (uint8_t)(offset >> 12);
        if (offset % (1u << 20) == 0) {
            uint64_t now = memory_of(NULL, process_id());
            peak = now > peak ? now : peak;
        }
    }
    for (uint64_t offset = 0; area != NULL && offset < size; offset += 4096)
        mismatches += area[offset] != (uint8_t)(offset >> 12);
    uint64_t now = memory_of(NULL, process_id());
    peak = now > peak ? now : peak;
    if (result >= 0)
        teramem_cleanup();
    printf("@json {\"kind\":\"hostile_pager_quota\",\"quota\":%lu,\"region\":%lu,"
           "\"peak_memory\":%lu,\"mismatches\":%lu,\"verified\":%s}\n",
           quota, size, peak, mismatches, area != NULL && mismatches == 0 ? "true" : "false");
    expect("memory_within_the_account_quota", area != NULL && peak <= quota, (long)peak);
}

/* `corrupt PATH BYTES` (as uid 0): once PATH holds BYTES, every byte of it is
 * overwritten, as a failing or tampered backend would. */
static void corrupt_file(const char *path, uint64_t wanted)
{
    struct file_status status = {0};
    long waited = 0;
    while ((stat(path, &status) < 0 || status.size < wanted) && waited < CORRUPT_WAIT_MS) {
        sleep_ms(50);
        waited += 50;
    }
    sleep_ms(200); /* the stores in flight land first */
    stat(path, &status);
    int fd = open(path, O_RDWR);
    static uint8_t garbage[CORRUPT_CHUNK];
    memset(garbage, 0x5a, sizeof garbage);
    uint64_t written = 0;
    for (uint64_t offset = 0; fd >= 0 && offset < status.size; offset += CORRUPT_CHUNK) {
        uint64_t left = status.size - offset;
        long done = pwrite(fd, garbage, left < CORRUPT_CHUNK ? left : CORRUPT_CHUNK, offset);
        if (done <= 0)
            break;
        written += (uint64_t)done;
    }
    if (fd >= 0)
        close(fd);
    printf("@json {\"kind\":\"hostile_pager_corrupt\",\"path\":\"%s\",\"bytes\":%lu}\n", path,
           written);
    expect("swap_file_overwritten", written >= wanted, (long)written);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    uint64_t value = 0;
    if (argc > 2 && strcmp(mode, "corrupt") != 0 && !size_parse(argv[2], &value)) {
        printf("hostilepager: bad number '%s'\n", argv[2]);
        return 2;
    }
    if (strcmp(mode, "tables") == 0)
        table_attacks();
    else if (strcmp(mode, "charge") == 0)
        charge_attack();
    else if (strcmp(mode, "backend") == 0 && argc > 2)
        backend_attack(value);
    else if (strcmp(mode, "keys") == 0 && argc > 2)
        keys_attack(value);
    else if (strcmp(mode, "key") == 0 && argc > 2)
        key_attack(value);
    else if (strcmp(mode, "hold") == 0 && argc > 2)
        return hold_slot(value);
    else if (strcmp(mode, "slots") == 0 && argc > 2)
        slot_attack(argv[2]);
    else if (strcmp(mode, "quota") == 0 && argc > 2)
        quota_attack(value);
    else if (strcmp(mode, "corrupt") == 0 && argc > 3 && size_parse(argv[3], &value))
        corrupt_file(argv[2], value);
    else {
        printf("usage: hostilepager tables | charge | backend BYTES | keys BYTES | key K | slots "
               "MS | quota "
               "BYTES | "
               "corrupt PATH BYTES\n");
        return 2;
    }
    return failures == 0 ? 0 : 1;
}
