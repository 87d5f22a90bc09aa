/* churn: metadata-heavy file-system churn for the crash tests (issue 13):
 * creates, grows, truncates, renames and removes files, makes and removes
 * directories under /churn, and every few steps writes a file under
 * /churn/keep, fsyncs it and prints
 * @json {"kind":"churn_fsynced","path":P,"seed":S,"bytes":N}; a kept file is
 * never touched again, so after a crash it must read back exactly (byte i of
 * seed S is churn_byte(S, i)). Usage: churn [STEPS] (0 or none: forever);
 * with STEPS it ends with
 * @json {"kind":"churn_done","steps":N,"fsyncs":F,"elapsed_us":T} (the
 * journal benchmark's metadata-heavy run, build/bench/journal_bench.py). */
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FILES 24
#define DIRECTORIES 8
#define CHUNK 8192

static uint8_t buffer[CHUNK];
static uint32_t fsyncs;

static uint64_t tsc(void)
{
    uint32_t low, high;
    __asm__ volatile("rdtsc" : "=a"(low), "=d"(high));
    return (uint64_t)high << 32 | low;
}

static uint64_t cycles_to_us(uint64_t cycles)
{
    struct clock_info clock;
    if (clock_get(&clock) != 0 || clock.tsc_hz == 0)
        return 0;
    return (uint64_t)((__uint128_t)cycles * 1000000u / clock.tsc_hz);
}

static uint8_t churn_byte(uint32_t seed, uint64_t offset)
{
    return (uint8_t)(seed * 31u + offset * 7u + offset / 251u);
}

static void fill(uint32_t seed, uint64_t offset, size_t length)
{
    for (size_t i = 0; i < length; i++)
        buffer[i] = churn_byte(seed, offset + i);
}

/* Errors a churn step may meet on purpose (the name is gone or taken). */
static bool expected(long error)
{
    return error >= 0 || error == -E_NOT_FOUND || error == -E_EXISTS || error == -E_NOT_EMPTY;
}

static void check(const char *what, long error)
{
    if (expected(error))
        return;
    printf("@json {\"kind\":\"churn_error\",\"step\":\"%s\",\"error\":\"%s\"}\n", what,
           error_text(error));
    exit(1);
}

static long write_pattern(int fd, uint32_t seed, uint64_t bytes)
{
    for (uint64_t done = 0; done < bytes;) {
        size_t piece = bytes - done < CHUNK ? (size_t)(bytes - done) : CHUNK;
        fill(seed, done, piece);
        long written = write(fd, buffer, piece);
        if (written < 0)
            return written;
        done += (uint64_t)written;
    }
    return 0;
}

static void path_of(char *path, size_t size, const char *format, uint32_t number)
{
    snprintf(path, size, format, number);
}

static void grow_file(uint32_t step)
{
    char path[64];
    path_of(path, sizeof path, "/churn/f%u", step % FILES);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND);
    check("open", fd);
    if (fd >= 0) {
        check("write", write_pattern(fd, step, 1000 + (step * 7919u) % 30000));
        close(fd);
    }
}

static void shrink_file(uint32_t step)
{
    char path[64];
    path_of(path, sizeof path, "/churn/f%u", (step / 3) % FILES);
    int fd = open(path, O_WRONLY);
    if (fd == -E_NOT_FOUND)
        return;
    check("open", fd);
    check("ftruncate", ftruncate(fd, (step * 131u) % 5000));
    close(fd);
}

static void remove_file(uint32_t step)
{
    char path[64];
    path_of(path, sizeof path, "/churn/f%u", (step / 2) % FILES);
    check("unlink", unlink(path));
}

static void rename_file(uint32_t step)
{
    char from[64], to[64];
    path_of(from, sizeof from, "/churn/f%u", (step / 5) % FILES);
    path_of(to, sizeof to, "/churn/f%u", (step / 7 + 3) % FILES);
    if (strcmp(from, to) != 0)
        check("rename", rename(from, to));
}

static void directory_step(uint32_t step)
{
    char path[64];
    uint32_t directory = (step / 4) % DIRECTORIES;
    path_of(path, sizeof path, "/churn/d%u", directory);
    if (step % 3 == 0) {
        char inner[64];
        snprintf(inner, sizeof inner, "/churn/d%u/x", directory);
        check("unlink", unlink(inner));
        check("rmdir", rmdir(path));
        return;
    }
    check("mkdir", mkdir(path));
    char inner[64];
    snprintf(inner, sizeof inner, "/churn/d%u/x", directory);
    int fd = open(inner, O_WRONLY | O_CREAT | O_TRUNC);
    check("open", fd);
    if (fd >= 0) {
        check("write", write_pattern(fd, step, 700));
        close(fd);
    }
}

static void keep_file(uint32_t step)
{
    char path[64];
    path_of(path, sizeof path, "/churn/keep/k%u", step);
    uint64_t bytes = 500 + (step * 104729u) % 20000;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC);
    check("open", fd);
    check("write", write_pattern(fd, step, bytes));
    long error = fsync(fd);
    check("fsync", error);
    fsyncs++;
    close(fd);
    printf("@json {\"kind\":\"churn_fsynced\",\"path\":\"%s\",\"seed\":%u,\"bytes\":%lu}\n", path,
           step, bytes);
}

static void churn_step(uint32_t step)
{
    switch (step % 6) {
    case 0:
    case 3:
        grow_file(step);
        break;
    case 1:
        directory_step(step);
        break;
    case 2:
        remove_file(step);
        rename_file(step);
        break;
    case 4:
        shrink_file(step);
        break;
    default:
        if (step % 12 == 5)
            keep_file(step);
        else
            directory_step(step + 1);
    }
}

int main(int argc, char **argv)
{
    uint64_t steps = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
    check("mkdir", mkdir("/churn"));
    check("mkdir", mkdir("/churn/keep"));
    printf("@json {\"kind\":\"churn_started\"}\n");
    uint64_t start = tsc();
    for (uint32_t step = 0; steps == 0 || step < steps; step++)
        churn_step(step);
    uint64_t elapsed = cycles_to_us(tsc() - start);
    printf("@json {\"kind\":\"churn_done\",\"steps\":%lu,\"fsyncs\":%u,\"elapsed_us\":%lu}\n",
           steps, fsyncs, elapsed);
    return 0;
}
