/* replicatest: reads after writes across FS instances (docs/storage.md,
 * "FS replicas"). `replicatest WRITER_CORE READER_CORE ROUNDS` runs the
 * writer here (on WRITER_CORE) and starts the reader on READER_CORE; in
 * each round the writer creates, patches, renames, truncates and unlinks a
 * file, and after each step the reader, told at once, must see exactly
 * that change through its own FS instance. `replicatest churn ...` runs
 * the writer and reader of churn.c instead. */
#include "replicatest.h"
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool report(const char *side, const char *name, uint32_t round, bool ok, long got)
{
    printf("@json {\"kind\":\"replicatest\",\"side\":\"%s\",\"case\":\"%s\",\"round\":%u,"
           "\"ok\":%s,\"got\":%ld,\"core\":%ld}\n",
           side, name, round, ok ? "true" : "false", got, core_id());
    return ok;
}

void round_path(char *buffer, uint32_t round, const char *suffix)
{
    snprintf(buffer, 64, "/replicatest/%u.%s", round, suffix);
}

/* The reader: for each step, waits to be told, checks, tells the writer
 * (one notification: done; the writer counts failures from the exit code). */
static int reader_main(long writer, uint32_t rounds)
{
    uint32_t failures = 0;
    for (uint32_t round = 0; round < rounds; round++) {
        for (uint32_t step = 0; step < STEPS; step++) {
            await_notification();
            failures += !reader_check(round, (enum round_step)step);
            notify(writer);
        }
    }
    return failures == 0 ? 0 : 1;
}

static int writer_main(uint32_t reader_core, uint32_t rounds)
{
    long made = mkdir("/replicatest");
    if (made != 0 && made != -E_EXISTS)
        return report("writer", "mkdir", 0, false, made) ? 0 : 1;
    char arguments[64];
    snprintf(arguments, sizeof arguments, "--reader %ld %u", process_id(), rounds);
    long reader = spawn("replicatest", arguments, reader_core, PRIORITY_APPLICATION);
    if (reader < 0)
        return report("writer", "reader_started", 0, false, reader) ? 0 : 1;
    uint32_t failures = 0;
    for (uint32_t round = 0; round < rounds; round++) {
        for (uint32_t step = 0; step < STEPS; step++) {
            failures += !writer_step(round, (enum round_step)step);
            notify(reader);
            await_notification(); /* the reader has checked */
        }
    }
    int code = -1;
    wait_process(reader, &code);
    report("writer", "reader_saw_every_change", rounds, code == 0, code);
    printf("@json {\"kind\":\"replicatest_summary\",\"rounds\":%u,\"writer_failures\":%u,"
           "\"reader_exit\":%d}\n",
           rounds, failures, code);
    return failures == 0 && code == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--churn-reader") == 0)
        return churn_reader(strtol(argv[2], NULL, 0), (uint32_t)strtoul(argv[3], NULL, 0));
    if (argc == 5 && strcmp(argv[1], "churn") == 0)
        return churn_writer((uint32_t)strtoul(argv[3], NULL, 0),
                            (uint32_t)strtoul(argv[4], NULL, 0));
    if (argc == 4 && strcmp(argv[1], "--reader") == 0)
        return reader_main(strtol(argv[2], NULL, 0), (uint32_t)strtoul(argv[3], NULL, 0));
    if (argc != 4) {
        printf("usage: replicatest WRITER_CORE READER_CORE ROUNDS (run it on WRITER_CORE)\n");
        return 2;
    }
    if ((uint32_t)core_id() != strtoul(argv[1], NULL, 0))
        printf("replicatest: runs on core %ld, not on the writer core asked\n", core_id());
    return writer_main((uint32_t)strtoul(argv[2], NULL, 0), (uint32_t)strtoul(argv[3], NULL, 0));
}
