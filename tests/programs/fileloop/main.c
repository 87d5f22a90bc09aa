/* fileloop: a normal program's file calls, timed, for the fair-sharing
 * tests (docs/authority.md): `fileloop ROUNDS` creates, writes, reads back,
 * stats and removes a 4 KiB file ROUNDS times, then syncs (FS's writes to
 * BLK), and prints one @json "fileloop" line with its failures and time. */
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILE_BYTES 4096

struct outcome {
    long calls, failures, first_error;
};

static void count(struct outcome *outcome, long result, long wanted)
{
    outcome->calls++;
    if (result == wanted)
        return;
    if (outcome->failures++ == 0)
        outcome->first_error = result < 0 ? result : -E_IO;
}

/* One round: create and write, read back and compare, stat, remove. */
static void round_trip(struct outcome *outcome, const char *path, uint8_t fill)
{
    static uint8_t written[FILE_BYTES], read_back[FILE_BYTES];
    memset(written, fill, sizeof written);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY);
    count(outcome, fd < 0 ? fd : 0, 0);
    if (fd >= 0) {
        count(outcome, write(fd, written, FILE_BYTES), FILE_BYTES);
        count(outcome, close(fd), 0);
    }
    fd = open(path, O_RDONLY);
    count(outcome, fd < 0 ? fd : 0, 0);
    if (fd >= 0) {
        count(outcome, read(fd, read_back, FILE_BYTES), FILE_BYTES);
        count(outcome, memcmp(written, read_back, FILE_BYTES) == 0 ? 0 : -E_IO, 0);
        count(outcome, close(fd), 0);
    }
    struct file_status status;
    count(outcome, stat(path, &status), 0);
    count(outcome, unlink(path), 0);
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
    if (rounds <= 0) {
        printf("usage: fileloop ROUNDS\n");
        return 2;
    }
    char path[64];
    snprintf(path, sizeof path, "/fileloop-%ld", process_id());
    struct outcome outcome = {0};
    uint64_t start = clock_microseconds();
    for (long i = 0; i < rounds; i++)
        round_trip(&outcome, path, (uint8_t)i);
    count(&outcome, sync(), 0);
    uint64_t elapsed = clock_microseconds() - start;
    printf("@json {\"kind\":\"fileloop\",\"rounds\":%ld,\"calls\":%ld,\"failures\":%ld,"
           "\"first_error\":%ld,\"elapsed_us\":%lu}\n",
           rounds, outcome.calls, outcome.failures, outcome.first_error, elapsed);
    return outcome.failures == 0 ? 0 : 1;
}
