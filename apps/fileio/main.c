/* fileio: seed 001's file access patterns over one file (sequential write and read with a
 * user buffer, random 4 KiB reads, random 4 KiB writes each followed by fsync), timed in TSC
 * cycles; one @json line per pattern. The same source runs on Linux (build/linux/build.sh). */
#include <formica/file.h>
#include <formica/size.h>
#include <formica/user.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANDOM_BYTES 4096u
#define BUFFER_MAX (1u << 20)

struct fileio_options {
    const char *path, *pattern;
    uint64_t size;       /* the file's bytes */
    uint64_t buffer;     /* a sequential call's bytes (the paper's BUFSIZ, 8 KiB, or 128 KiB) */
    uint64_t operations; /* random patterns: this many 4 KiB calls */
    uint64_t seed;
};

static uint8_t buffer[BUFFER_MAX];

static int usage(void)
{
    printf("usage: fileio -f PATH -s SIZE -p seq-write|seq-read|rand-read|rand-write-fsync "
           "[-b BUFFER] [-n OPERATIONS] [--seed N]\n");
    return 2;
}

static bool parse_option(struct fileio_options *o, const char *flag, const char *value)
{
    if (strcmp(flag, "-f") == 0)
        o->path = value;
    else if (strcmp(flag, "-p") == 0)
        o->pattern = value;
    else if (strcmp(flag, "-s") == 0)
        return size_parse(value, &o->size);
    else if (strcmp(flag, "-b") == 0)
        return size_parse(value, &o->buffer) && o->buffer >= 512 && o->buffer <= BUFFER_MAX;
    else if (strcmp(flag, "-n") == 0)
        return size_parse(value, &o->operations);
    else if (strcmp(flag, "--seed") == 0)
        return size_parse(value, &o->seed);
    else
        return false;
    return true;
}

static int parse_options(int argc, char **argv, struct fileio_options *o)
{
    *o = (struct fileio_options){
        .path = "/fileio.dat", .pattern = "", .buffer = 8192, .operations = 1000, .seed = 1};
    for (int i = 1; i + 1 < argc; i += 2)
        if (!parse_option(o, argv[i], argv[i + 1]))
            return usage();
    if ((argc - 1) % 2 != 0 || o->size < RANDOM_BYTES)
        return usage();
    return 0;
}

/* Every 8 bytes of the file say their own offset, so a read checks what it got, whichever
 * pattern wrote it and in whichever order the patterns run. */
static void pattern_fill(uint8_t *data, uint64_t bytes, uint64_t offset)
{
    for (uint64_t i = 0; i + 8 <= bytes; i += 8) {
        uint64_t word = offset + i;
        memcpy(data + i, &word, 8);
    }
}

static bool pattern_check(const uint8_t *data, uint64_t bytes, uint64_t offset)
{
    for (uint64_t i = 0; i + 8 <= bytes; i += 4096) {
        uint64_t word;
        memcpy(&word, data + i, 8);
        if (word != offset + i)
            return false;
    }
    return true;
}

static uint64_t random_next(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static uint64_t random_offset(uint64_t *state, uint64_t size)
{
    return random_next(state) % (size / RANDOM_BYTES) * RANDOM_BYTES;
}

static long sequential_write(int fd, const struct fileio_options *o)
{
    for (uint64_t offset = 0; offset < o->size; offset += o->buffer) {
        uint64_t bytes = o->size - offset < o->buffer ? o->size - offset : o->buffer;
        pattern_fill(buffer, bytes, offset);
        long written = pwrite(fd, buffer, bytes, offset);
        if (written != (long)bytes)
            return written < 0 ? written : -E_IO;
    }
    return fsync(fd);
}

static long sequential_read(int fd, const struct fileio_options *o)
{
    for (uint64_t offset = 0; offset < o->size; offset += o->buffer) {
        uint64_t bytes = o->size - offset < o->buffer ? o->size - offset : o->buffer;
        long got = pread(fd, buffer, bytes, offset);
        if (got != (long)bytes)
            return got < 0 ? got : -E_IO;
        if (!pattern_check(buffer, bytes, offset))
            return -E_CORRUPT;
    }
    return 0;
}

static long random_read(int fd, const struct fileio_options *o)
{
    uint64_t state = o->seed * 2654435761u + 1;
    for (uint64_t i = 0; i < o->operations; i++) {
        uint64_t offset = random_offset(&state, o->size);
        long got = pread(fd, buffer, RANDOM_BYTES, offset);
        if (got != (long)RANDOM_BYTES)
            return got < 0 ? got : -E_IO;
        if (!pattern_check(buffer, RANDOM_BYTES, offset))
            return -E_CORRUPT;
    }
    return 0;
}

static long random_write_fsync(int fd, const struct fileio_options *o)
{
    uint64_t state = o->seed * 2654435761u + 1;
    for (uint64_t i = 0; i < o->operations; i++) {
        uint64_t offset = random_offset(&state, o->size);
        pattern_fill(buffer, RANDOM_BYTES, offset);
        long written = pwrite(fd, buffer, RANDOM_BYTES, offset);
        if (written != (long)RANDOM_BYTES)
            return written < 0 ? written : -E_IO;
        long synced = fsync(fd);
        if (synced < 0)
            return synced;
    }
    return 0;
}

static long run_pattern(int fd, const struct fileio_options *o, uint64_t *bytes)
{
    bool random = strncmp(o->pattern, "rand-", 5) == 0;
    *bytes = random ? o->operations * RANDOM_BYTES : o->size;
    if (strcmp(o->pattern, "seq-write") == 0)
        return sequential_write(fd, o);
    if (strcmp(o->pattern, "seq-read") == 0)
        return sequential_read(fd, o);
    if (strcmp(o->pattern, "rand-read") == 0)
        return random_read(fd, o);
    if (strcmp(o->pattern, "rand-write-fsync") == 0)
        return random_write_fsync(fd, o);
    return -E_INVALID;
}

static int open_for(const struct fileio_options *o)
{
    if (strcmp(o->pattern, "seq-write") == 0)
        return open(o->path, O_RDWR | O_CREAT | O_TRUNC);
    return open(o->path, O_RDWR);
}

int main(int argc, char **argv)
{
    struct fileio_options o;
    int parsed = parse_options(argc, argv, &o);
    if (parsed != 0)
        return parsed;
    int fd = open_for(&o);
    if (fd < 0) {
        printf("fileio: cannot open %s: %s\n", o.path, error_text(fd));
        return 1;
    }
    struct clock_info clock;
    clock_get(&clock);
    uint64_t bytes = 0, start = read_timestamp_counter();
    long result = run_pattern(fd, &o, &bytes);
    uint64_t cycles = read_timestamp_counter() - start;
    close(fd);
    if (result < 0) {
        printf("fileio: %s of %s failed: %s\n", o.pattern, o.path, error_text(result));
        return 1;
    }
    printf("@json {\"kind\":\"fileio\",\"pattern\":\"%s\",\"file_bytes\":%lu,\"bytes\":%lu,"
           "\"buffer_bytes\":%lu,\"cycles\":%lu,\"tsc_hz\":%lu}\n",
           o.pattern, o.size, bytes, strncmp(o.pattern, "rand-", 5) == 0 ? RANDOM_BYTES : o.buffer,
           cycles, clock.tsc_hz);
    return 0;
}
