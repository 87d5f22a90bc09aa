/* fuzz: the system-call and ICA fuzzer, an ordinary program.
 * `fuzz --seed S --calls N [--trace]` makes N random but well-spread calls
 * (syscalls.c, requests.c, files.c, children.c) and must see only results
 * and error values; `fuzz --clean` removes what runs left under /fuzz.
 * docs/fuzzing.md: what it covers and how to replay a seed. */
#include "fuzz.h"
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/request.h>
#include <formica/pager.h>
#include <formica/storage.h>
#include <formica/syscalls.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVER_WAIT_MS 30000 /* the servers may still be starting */

#define HISTORY 1024 /* calls remembered for an anomaly's report */

static struct fuzz fuzz;

struct call_record {
    const char *name;
    uint64_t number, a, b, c;
    long result;
};
static struct call_record history[HISTORY];

static void remember(const struct fuzz *run, const char *name, long result, uint64_t a, uint64_t b,
                     uint64_t c)
{
    history[run->calls % HISTORY] = (struct call_record){name, run->calls, a, b, c, result};
}

/* The last calls before an anomaly that involve `value` (0: the last 16). */
void fuzz_print_history(const struct fuzz *run, uint64_t value)
{
    uint64_t span = value != 0 ? HISTORY : 16;
    for (uint64_t i = run->calls >= span ? run->calls - span + 1 : 1; i <= run->calls; i++) {
        const struct call_record *call = &history[i % HISTORY];
        if (value != 0 && call->a != value && call->b != value && call->c != value &&
            (uint64_t)call->result != value)
            continue;
        printf("fuzz: history %lu %s(0x%lx, 0x%lx, 0x%lx) = %ld\n", (unsigned long)call->number,
               call->name, (unsigned long)call->a, (unsigned long)call->b, (unsigned long)call->c,
               call->result);
    }
}

long fuzz_result(struct fuzz *run, const char *name, long result, uint64_t a, uint64_t b,
                 uint64_t c)
{
    run->calls++;
    remember(run, name, result, a, b, c);
    if (run->trace)
        printf("fuzz: %lu %s(0x%lx, 0x%lx, 0x%lx) = %ld\n", (unsigned long)run->calls, name,
               (unsigned long)a, (unsigned long)b, (unsigned long)c, result);
    if (result >= 0)
        run->successes++;
    else if (result > -E_ERROR_COUNT)
        run->errors++;
    else
        fuzz_anomaly(run, name, result, "not an error code");
    if (!scratch_guard_intact()) {
        fuzz_anomaly(run, name, result, "wrote past the end of the buffer it was given");
        scratch_guard_set();
    }
    return result;
}

void fuzz_anomaly(struct fuzz *run, const char *name, long result, const char *why)
{
    run->anomalies++;
    printf("@json {\"kind\":\"fuzz_anomaly\",\"seed\":%lu,\"call\":%lu,\"name\":\"%s\","
           "\"result\":%ld,\"why\":\"%s\"}\n",
           (unsigned long)run->seed, (unsigned long)run->calls, name, result, why);
    if (!run->trace)
        fuzz_print_history(run, 0);
}

static long parent_of(long pid)
{
    static struct process_info processes[256];
    long count = process_list(processes, 256);
    for (long i = 0; i < count; i++)
        if (processes[i].pid == (uint32_t)pid)
            return processes[i].parent;
    return 0;
}

static void set_up(void)
{
    const char *names[] = {SERVER_NAME_FS, SERVER_NAME_BLK, SERVER_NAME_DK, SERVER_NAME_PAGER};
    for (unsigned i = 0; i < 4; i++)
        fuzz.servers[i] = server_wait_for(names[i], SERVER_WAIT_MS);
    fuzz.self = process_id();
    fuzz.parent = parent_of(fuzz.self);
    long made = mkdir(FUZZ_DIRECTORY);
    if (made != 0 && made != -E_EXISTS)
        printf("fuzz: cannot make %s: %s\n", FUZZ_DIRECTORY, error_text(made));
}

/* One step: a family chosen at random, which makes one call or a few. */
static void step(void)
{
    uint64_t family = random_below(&fuzz, 100);
    if (family < 40)
        fuzz_system_call(&fuzz);
    else if (family < 70)
        fuzz_request(&fuzz);
    else if (family < 95)
        fuzz_file(&fuzz);
    else if (family < 98)
        fuzz_flood(&fuzz);
    else if (random_chance(&fuzz, 50))
        fuzz_child_step(&fuzz); /* 1 step in 100: a child fuzzer's calls come on top */
}

static int parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            fuzz.seed = strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            fuzz.call_limit = strtoul(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--trace") == 0)
            fuzz.trace = true;
        else if (strcmp(argv[i], "--child") == 0)
            fuzz.child = true;
        else if (strcmp(argv[i], "--clean") == 0)
            return 1;
        else {
            printf("usage: fuzz --seed S --calls N [--trace] | fuzz --clean\n");
            return -1;
        }
    }
    return 0;
}

static int clean(void)
{
    long error = files_clean();
    printf("@json {\"kind\":\"fuzz_clean\",\"result\":%ld}\n", error);
    if (error != 0)
        printf("fuzz: cleaning %s failed: %s\n", FUZZ_DIRECTORY, error_text(error));
    return error == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int mode = parse(argc, argv);
    if (mode != 0)
        return mode > 0 ? clean() : 2;
    random_seed(&fuzz, fuzz.seed);
    scratch_guard_set();
    set_up();
    while (fuzz.calls < fuzz.call_limit)
        step();
    collect_outstanding(&fuzz);
    children_end_all(&fuzz);
    files_close_all(&fuzz);
    if (!fuzz.child)
        printf("@json {\"kind\":\"fuzz\",\"seed\":%lu,\"calls\":%lu,\"errors\":%lu,"
               "\"successes\":%lu,\"anomalies\":%lu}\n",
               (unsigned long)fuzz.seed, (unsigned long)fuzz.calls, (unsigned long)fuzz.errors,
               (unsigned long)fuzz.successes, (unsigned long)fuzz.anomalies);
    return fuzz.anomalies == 0 ? 0 : 1;
}
