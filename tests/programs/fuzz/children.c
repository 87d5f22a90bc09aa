/* children.c: children spawned and ended during a run: smaller fuzzers
 * (`fuzz --child`, which spawn nothing themselves), programs that exit at
 * once, and spinners. Each is killed mid-run or waited for; by the end of
 * the run every child has ended and been collected. */
#include "fuzz.h"
#include <formica/syscalls.h>
#include <formica/user.h>
#include <stdio.h>

static void forget_child(struct fuzz *fuzz, uint32_t index)
{
    fuzz->children[index] = fuzz->children[--fuzz->child_count];
}

static void spawn_child(struct fuzz *fuzz)
{
    char arguments[96];
    const char *program = "fuzz";
    uint64_t kind = random_below(fuzz, 4);
    snprintf(arguments, sizeof arguments, "--child --seed %lu --calls %u",
             (unsigned long)random_next(fuzz), 10 + (unsigned)random_below(fuzz, 60));
    if (kind == 2) {
        program = "hello";
        snprintf(arguments, sizeof arguments, "child");
    } else if (kind == 3) {
        program = "spin";
        snprintf(arguments, sizeof arguments, "0");
    }
    uint32_t core = random_chance(fuzz, 50) ? CORE_ANY : (uint32_t)random_below(fuzz, 3);
    long pid = fuzz_result(fuzz, "spawn_child",
                           spawn(program, arguments, core, PRIORITY_APPLICATION), kind, core, 0);
    if (pid > 0 && kind == 3 && random_chance(fuzz, 50)) {
        kill_process(pid); /* a spinner may not live on: it would slow the run */
        wait_process(pid, NULL);
        return;
    }
    if (pid > 0)
        fuzz->children[fuzz->child_count++] = pid;
}

/* Ends child `index`: killed (any child) or waited for (those that end by
 * themselves: fuzzers and hello). */
static void end_child(struct fuzz *fuzz, uint32_t index, bool kill_it)
{
    long pid = fuzz->children[index];
    if (kill_it)
        fuzz_result(fuzz, "kill_child", kill_process(pid), (uint64_t)pid, 0, 0);
    int code = 0;
    fuzz_result(fuzz, "wait_child", wait_process(pid, &code), (uint64_t)pid, (uint64_t)code, 0);
    forget_child(fuzz, index);
}

void fuzz_child_step(struct fuzz *fuzz)
{
    if (fuzz->child)
        return; /* a child fuzzer spawns no children of its own */
    if (fuzz->child_count < FUZZ_CHILDREN && random_chance(fuzz, 60)) {
        spawn_child(fuzz);
        return;
    }
    if (fuzz->child_count > 0)
        end_child(fuzz, (uint32_t)random_below(fuzz, fuzz->child_count), true);
}

void children_end_all(struct fuzz *fuzz)
{
    while (fuzz->child_count > 0)
        end_child(fuzz, fuzz->child_count - 1, true);
}
