/* tests/programs/mmaptest: mmap of files checked against pread of the same
 * bytes (docs/mmap.md, tests/integration/test_mmap.py). Each command prints
 * @json {"kind":"mmap",...} lines and exits 0 when every check held:
 *   mmaptest read PATH MIB     write MIB MiB, map them shared and copies, compare
 *   mmaptest evict PATH MIB [msync]  MIB MiB mapped shared writable, read and stored whole,
 *                              pread after each (more than a small BLK cache or tier holds:
 *                              evictions); `msync`: the stores msync'ed before the preads
 *   mmaptest errors PATH       each refused mmap and its E_* code
 *   mmaptest other PATH        a file of another user, open for reading only
 *   mmaptest pastend PATH      a page past the end of the file: ends as by SIGBUS
 *   mmaptest keep PATH         map and touch every page, then exit mapped
 *   mmaptest private PATH      stores to a private mapping: seen there, not in the file
 *   mmaptest shared PATH       stores to a shared mapping: seen by pread after msync
 *   mmaptest crash PATH        64 pages stored through a mapping of holes, msync, then wait
 *   mmaptest truncate PATH     the file truncated while mapped: past its end ends as by SIGBUS
 *   mmaptest unlink PATH       the file unlinked while mapped: still mapped, freed at munmap
 *   mmaptest advise PATH       madvise: will-need maps the range, don't-need ends its lends
 *   mmaptest syscall PATH      a system call given mapped pages not touched yet, and one past
 *                              the end
 *   mmaptest partial PATH      munmap of a region's head, tail and middle, and over gaps
 *   mmaptest unmapped PATH     a page unmapped from the middle touched: ends as by a fault
 *   mmaptest fixed PATH        MAP_FIXED over part of a region replaces it
 *   mmaptest dontneed PATH     MADV_DONTNEED drops private copies, ends shared lends
 *   mmaptest cycles PATH       300 partial map and unmap cycles (in a small account)
 *   mmaptest account PATH MIB  in a small account left 1 MiB, MIB MiB mapped and read whole
 *                              (lends recycled within it), its use back after munmap
 *   mmaptest accountfull PATH  copies fill a small account, then a mapped read: refused (142)
 *   mmaptest lent              BLK's count of blocks lent now */
#include <formica/blk_shards.h>
#include <formica/errors.h>
#include <formica/file.h>
#include <formica/file_region.h>
#include <formica/ica.h>
#include <formica/request.h>
#include <formica/protocol/syscalls.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PAGE 4096u

static int failures;

static void check(const char *what, bool ok, long detail)
{
    printf("@json {\"kind\":\"mmap\",\"check\":\"%s\",\"ok\":%s,\"detail\":%ld}\n", what,
           ok ? "true" : "false", detail);
    if (!ok)
        failures++;
}

/* The pattern's byte at `offset`: differs from page to page and within one. */
static uint8_t pattern(uint64_t offset)
{
    return (uint8_t)(offset * 131 + (offset >> 12) * 7 + 1);
}

static long write_pattern(const char *path, uint64_t bytes)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0)
        return fd;
    static uint8_t piece[64 * 1024];
    for (uint64_t at = 0; at < bytes; at += sizeof(piece)) {
        uint64_t length = bytes - at < sizeof(piece) ? bytes - at : sizeof(piece);
        for (uint64_t i = 0; i < length; i++)
            piece[i] = pattern(at + i);
        long written = pwrite(fd, piece, length, at);
        if (written != (long)length)
            return written < 0 ? written : -E_IO;
    }
    return close(fd);
}

/* Pages of the mapping at `mapped` (file offset `offset`, `bytes`) that
 * differ from what pread reads there. */
static long mismatched_pages(int fd, const uint8_t *mapped, uint64_t offset, uint64_t bytes)
{
    static uint8_t expected[PAGE];
    long mismatches = 0;
    for (uint64_t at = 0; at < bytes; at += PAGE) {
        uint64_t length = bytes - at < PAGE ? bytes - at : PAGE;
        if (pread(fd, expected, length, offset + at) != (long)length ||
            memcmp(expected, mapped + at, length) != 0)
            mismatches++;
    }
    return mismatches;
}

static long blk_lent_now(void)
{
    struct blk_shards shards;
    long error = blk_shards_open(&shards, 5000);
    long control = error == 0 ? ica_allocate(ICA_KIND_CONTROL, 4096) : error;
    if (control < 0)
        return control;
    uint64_t blocks = 0;
    error = blk_shards_lent(&shards, (uint64_t)control, &blocks);
    ica_free((uint64_t)control);
    return error != 0 ? error : (long)blocks;
}

static int read_command(const char *path, uint64_t mib)
{
    uint64_t bytes = mib << 20;
    long lent_before = blk_lent_now();
    long error = write_pattern(path, bytes);
    check("write", error == 0, error);
    int fd = open(path, O_RDONLY);
    check("open", fd >= 0, fd);
    uint8_t *shared = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    check("map shared", shared != MAP_FAILED, mmap_error());
    if (shared == MAP_FAILED)
        return 1;
    check("shared equals pread", mismatched_pages(fd, shared, 0, bytes) == 0,
          mismatched_pages(fd, shared, 0, bytes));
    check("shared first byte", shared[0] == pattern(0), shared[0]);
    check("shared last byte", shared[bytes - 1] == pattern(bytes - 1), shared[bytes - 1]);
    uint64_t offset = bytes / 2; /* a private mapping of the second half, at an offset */
    uint8_t *copies = mmap(NULL, bytes - offset, PROT_READ, MAP_PRIVATE, fd, (int64_t)offset);
    check("map private", copies != MAP_FAILED, mmap_error());
    if (copies == MAP_FAILED)
        return 1;
    check("private equals pread", mismatched_pages(fd, copies, offset, bytes - offset) == 0, 0);
    check("two mappings of one page agree", copies[5] == shared[offset + 5], copies[5]);
    check("unmap shared", munmap(shared, bytes) == 0, 0);
    check("unmap private", munmap(copies, bytes - offset) == 0, 0);
    check("unmapped twice is fine", munmap(shared, bytes) == 0, 0); /* POSIX */
    close(fd);
    long lent_after = blk_lent_now();
    check("lends all ended", lent_after == lent_before, lent_after - lent_before);
    printf("@json {\"kind\":\"mmap_read\",\"bytes\":%lu,\"lent_before\":%ld,\"lent_after\":%ld}\n",
           bytes, lent_before, lent_after);
    return failures == 0 ? 0 : 1;
}

/* The bytes `evict` stores through its mapping: not the file's pattern anywhere. */
static uint8_t stored_pattern(uint64_t offset)
{
    return (uint8_t)(pattern(offset) ^ 0xa5);
}

/* Pages of the file (`bytes` from 0) whose bytes, read with pread, are not
 * stored_pattern's. */
static long pages_not_stored(int fd, uint64_t bytes)
{
    static uint8_t read_back[PAGE];
    long mismatches = 0;
    for (uint64_t at = 0; at < bytes; at += PAGE) {
        bool same = pread(fd, read_back, PAGE, at) == (long)PAGE;
        for (uint32_t i = 0; i < PAGE && same; i++)
            same = read_back[i] == stored_pattern(at + i);
        mismatches += !same;
    }
    return mismatches;
}

/* A shared writable mapping of MIB MiB, far more than a small BLK cache
 * holds (test_mmap boots with blk_cache_kib=1024): BLK's CLOCK must revoke
 * mapped blocks to evict them. Every page read and compared with pread,
 * then stored into whole and read back with pread (dirty evicted pages
 * written back first), then unmapped (without msync unless `sync`: the
 * clean power-off brings the rest to the disk, which the host checks). */
static int evict_command(const char *path, uint64_t mib, bool sync)
{
    uint64_t bytes = mib << 20;
    long lent_before = blk_lent_now();
    long error = write_pattern(path, bytes);
    check("write", error == 0, error);
    int fd = open(path, O_RDWR);
    uint8_t *mapped = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    check("map shared writable", fd >= 0 && mapped != MAP_FAILED, mmap_error());
    if (mapped == MAP_FAILED)
        return 1;
    long mismatches = mismatched_pages(fd, mapped, 0, bytes);
    check("every mapped page equals pread", mismatches == 0, mismatches);
    for (uint64_t at = 0; at < bytes; at++)
        mapped[at] = stored_pattern(at);
    if (sync) {
        int synced = msync(mapped, bytes, MS_SYNC);
        check("msync", synced == 0, synced);
    }
    mismatches = mismatched_pages(fd, mapped, 0, bytes);
    check("every stored page equals pread", mismatches == 0, mismatches);
    mismatches = pages_not_stored(fd, bytes);
    check("pread reads every store", mismatches == 0, mismatches);
    check("unmap", munmap(mapped, bytes) == 0, 0);
    close(fd);
    long lent_after = blk_lent_now();
    check("lends all ended", lent_after == lent_before, lent_after - lent_before);
    printf("@json {\"kind\":\"mmap_evict\",\"bytes\":%lu,\"lent_before\":%ld,"
           "\"lent_after\":%ld}\n",
           bytes, lent_before, lent_after);
    return failures == 0 ? 0 : 1;
}

static void expect_refused(const char *what, void *mapped, long expected)
{
    long error = mapped == MAP_FAILED ? mmap_error() : 0;
    check(what, mapped == MAP_FAILED && error == expected, error);
    if (mapped != MAP_FAILED)
        munmap(mapped, PAGE);
}

static int errors_command(const char *path)
{
    long error = write_pattern(path, 3 * PAGE);
    check("write", error == 0, error);
    int directory = open("/", O_RDONLY | O_DIRECTORY);
    int reading = open(path, O_RDONLY);
    int writing = open(path, O_RDWR);
    expect_refused("directory", mmap(NULL, PAGE, PROT_READ, MAP_SHARED, directory, 0),
                   -E_IS_DIRECTORY);
    expect_refused("length 0", mmap(NULL, 0, PROT_READ, MAP_SHARED, reading, 0), -E_INVALID);
    expect_refused("unaligned offset", mmap(NULL, PAGE, PROT_READ, MAP_SHARED, reading, 100),
                   -E_INVALID);
    expect_refused("negative offset",
                   mmap(NULL, PAGE, PROT_READ, MAP_SHARED, reading, -(int64_t)PAGE), -E_INVALID);
    expect_refused("neither shared nor private", mmap(NULL, PAGE, PROT_READ, 0, reading, 0),
                   -E_INVALID);
    expect_refused("shared write on a read-only descriptor",
                   mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, reading, 0), -E_PERMISSION);
    expect_refused("not a descriptor", mmap(NULL, PAGE, PROT_READ, MAP_SHARED, 77, 0),
                   -E_BAD_HANDLE);
    expect_refused("fixed outside the window",
                   mmap((void *)0x10000000, PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, reading, 0),
                   -E_INVALID);
    expect_refused("too large", mmap(NULL, 1ull << 40, PROT_READ, MAP_SHARED, reading, 0),
                   -E_INVALID);
    check("munmap of no region", munmap((void *)0x300000001000ull, PAGE) == 0, 0); /* POSIX */
    check("msync flags", msync(NULL, PAGE, MS_SYNC | MS_ASYNC) == -E_INVALID, 0);
    check("madvise outside a mapping", madvise(NULL, PAGE, MADV_NORMAL) == -E_INVALID, 0);
    uint8_t *fine = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, writing, 0);
    check("a good mapping after the refusals", fine != MAP_FAILED && fine[1] == pattern(1),
          mmap_error());
    if (fine != MAP_FAILED)
        munmap(fine, PAGE);
    return failures == 0 ? 0 : 1;
}

static int other_command(const char *path)
{
    check("open for writing refused", open(path, O_RDWR) < 0, 0);
    int fd = open(path, O_RDONLY);
    check("open for reading", fd >= 0, fd);
    expect_refused("another user's file, shared write",
                   mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), -E_PERMISSION);
    uint8_t *mapped = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
    check("another user's file, read", mapped != MAP_FAILED, mmap_error());
    if (mapped != MAP_FAILED) {
        uint8_t expected[16];
        check("its bytes", pread(fd, expected, 16, 0) == 16 && memcmp(expected, mapped, 16) == 0,
              mapped[0]);
        munmap(mapped, PAGE);
    }
    return failures == 0 ? 0 : 1;
}

/* A file of 5000 bytes mapped for three pages: the second page (partly the
 * file's) reads, the third ends the process (exit code 135). */
static int past_end_command(const char *path)
{
    long error = write_pattern(path, 5000);
    int fd = open(path, O_RDONLY);
    uint8_t *mapped = mmap(NULL, 3 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    check("map", error == 0 && mapped != MAP_FAILED, mmap_error());
    if (mapped == MAP_FAILED)
        return 1;
    check("last byte of the file", mapped[4999] == pattern(4999), mapped[4999]);
    check("past the end in its last page", mapped[5000] == 0, mapped[5000]);
    printf("mmaptest: touching the page past the end\n");
    volatile uint8_t past = mapped[2 * PAGE];
    printf("mmaptest: read %u past the end: not ended\n", past);
    return 2;
}

static int keep_command(const char *path)
{
    long error = write_pattern(path, 64 * PAGE);
    int fd = open(path, O_RDONLY);
    uint8_t *mapped = mmap(NULL, 64 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    uint8_t *again = mmap(NULL, 64 * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
    check("map", error == 0 && mapped != MAP_FAILED && again != MAP_FAILED, mmap_error());
    if (mapped == MAP_FAILED || again == MAP_FAILED)
        return 1;
    unsigned sum = 0;
    for (uint64_t at = 0; at < 64 * PAGE; at += PAGE)
        sum += mapped[at] + again[at];
    long lent = blk_lent_now();
    check("blocks lent while mapped", lent >= 64, lent);
    printf("mmaptest: exiting with 128 pages mapped (sum %u)\n", sum);
    return failures == 0 ? 0 : 1; /* no munmap: the exit ends the lends */
}

/* Stores to a private mapping of 16 pages of data and 8 of holes: the
 * mapping sees them, pread and a shared mapping of the file do not. */
static int private_command(const char *path)
{
    long lent_before = blk_lent_now();
    long error = write_pattern(path, 16 * PAGE);
    int fd = open(path, O_RDWR);
    check("grow with holes", error == 0 && ftruncate(fd, 24 * PAGE) == 0, error);
    uint8_t *copies = mmap(NULL, 24 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    uint8_t *shared = mmap(NULL, 24 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    check("map", copies != MAP_FAILED && shared != MAP_FAILED, mmap_error());
    if (copies == MAP_FAILED || shared == MAP_FAILED)
        return 1;
    check("read before the store", copies[PAGE + 3] == pattern(PAGE + 3), copies[PAGE + 3]);
    copies[PAGE + 3] = 0xee;      /* a page read first: present, read-only, copied */
    copies[5 * PAGE + 9] = 0xdd;  /* a page never touched: brought in, then copied */
    copies[20 * PAGE + 1] = 0xcc; /* a hole: zeroes of its own */
    check("store seen in the mapping", copies[PAGE + 3] == 0xee && copies[5 * PAGE + 9] == 0xdd,
          copies[PAGE + 3]);
    check("rest of the copied page kept",
          copies[PAGE + 4] == pattern(PAGE + 4) && copies[5 * PAGE + 8] == pattern(5 * PAGE + 8),
          copies[PAGE + 4]);
    check("hole reads zeroes", copies[21 * PAGE] == 0 && copies[20 * PAGE] == 0, copies[21 * PAGE]);
    check("hole store seen", copies[20 * PAGE + 1] == 0xcc, copies[20 * PAGE + 1]);
    uint8_t byte = 0;
    check("pread does not see it", pread(fd, &byte, 1, PAGE + 3) == 1 && byte == pattern(PAGE + 3),
          byte);
    check("a shared mapping does not see it",
          shared[PAGE + 3] == pattern(PAGE + 3) && shared[5 * PAGE + 9] == pattern(5 * PAGE + 9),
          shared[PAGE + 3]);
    check("untouched private pages equal pread",
          mismatched_pages(fd, copies + 8 * PAGE, 8 * PAGE, 8 * PAGE) == 0, 0);
    check("unmap", munmap(copies, 24 * PAGE) == 0 && munmap(shared, 24 * PAGE) == 0, 0);
    close(fd);
    long lent_after = blk_lent_now();
    check("lends all ended", lent_after == lent_before, lent_after - lent_before);
    return failures == 0 ? 0 : 1;
}

static uint8_t pread_byte(int fd, uint64_t offset)
{
    uint8_t byte = 0;
    return pread(fd, &byte, 1, offset) == 1 ? byte : 0xff;
}

/* Stores through a shared mapping of 32 pages of data and 8 of holes. */
static int shared_command(const char *path)
{
    long lent_before = blk_lent_now();
    long error = write_pattern(path, 32 * PAGE);
    int fd = open(path, O_RDWR);
    check("grow with holes", error == 0 && ftruncate(fd, 40 * PAGE) == 0, error);
    uint8_t *shared = mmap(NULL, 40 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    uint8_t *reader = mmap(NULL, 40 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    check("map", shared != MAP_FAILED && reader != MAP_FAILED, mmap_error());
    if (shared == MAP_FAILED || reader == MAP_FAILED)
        return 1;
    check("read before the store", shared[3] == pattern(3), shared[3]);
    shared[3] = 0xab;             /* a page read first: its lend becomes writable */
    shared[10 * PAGE + 7] = 0xcd; /* a page never touched */
    shared[35 * PAGE + 1] = 0xef; /* a hole: allocated, zeroed */
    check("another mapping sees the stores",
          reader[3] == 0xab && reader[10 * PAGE + 7] == 0xcd && reader[35 * PAGE + 1] == 0xef,
          reader[3]);
    check("msync", msync(shared, 40 * PAGE, MS_SYNC) == 0, 0);
    check("pread sees the stores",
          pread_byte(fd, 3) == 0xab && pread_byte(fd, 10 * PAGE + 7) == 0xcd &&
              pread_byte(fd, 35 * PAGE + 1) == 0xef,
          pread_byte(fd, 3));
    check("rest of the filled hole is zeroes",
          pread_byte(fd, 35 * PAGE) == 0 && pread_byte(fd, 36 * PAGE - 1) == 0, 0);
    check("rest of the page kept", pread_byte(fd, 4) == pattern(4), pread_byte(fd, 4));
    shared[3] = 0x12; /* after the write-back: write-protected, faults, dirty again */
    check("msync again", msync(shared, 40 * PAGE, MS_SYNC) == 0, 0);
    check("pread sees the second store", pread_byte(fd, 3) == 0x12, pread_byte(fd, 3));
    uint8_t written = 0x77;
    check("pwrite seen in the mapping",
          pwrite(fd, &written, 1, 12 * PAGE + 5) == 1 && shared[12 * PAGE + 5] == 0x77,
          shared[12 * PAGE + 5]);
    check("msync async", msync(shared, PAGE, MS_ASYNC) == 0, 0);
    check("msync outside a mapping", msync((void *)0x1000, PAGE, MS_SYNC) == -E_INVALID, 0);
    check("unmap", munmap(shared, 40 * PAGE) == 0 && munmap(reader, 40 * PAGE) == 0, 0);
    check("pread after munmap", pread_byte(fd, 3) == 0x12, pread_byte(fd, 3));
    close(fd);
    long lent_after = blk_lent_now();
    check("lends all ended", lent_after == lent_before, lent_after - lent_before);
    return failures == 0 ? 0 : 1;
}

/* 64 pages of holes, each filled through the mapping with its own byte
 * (page 1 then 0x99), msync'ed; one more store left unsynced, and a wait
 * for the kill. */
static int crash_command(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC);
    check("make the file", fd >= 0 && ftruncate(fd, 64 * PAGE) == 0, fd);
    uint8_t *shared = mmap(NULL, 64 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    check("map", shared != MAP_FAILED, mmap_error());
    if (shared == MAP_FAILED)
        return 1;
    for (uint32_t page = 0; page < 64; page++)
        memset(shared + page * PAGE, 0x40 + page, PAGE);
    long synced = msync(shared, 64 * PAGE, MS_SYNC);
    check("msync", synced == 0, synced);
    /* written back and write-protected: this store faults, dirtying it again */
    memset(shared + PAGE, 0x99, PAGE);
    synced = msync(shared, 64 * PAGE, MS_SYNC);
    check("msync of a page stored into again", synced == 0, synced);
    printf("@json {\"kind\":\"mmap_synced\",\"pages\":64}\n");
    shared[0] = 0x01; /* not synced: the disk may or may not have it */
    for (;;)
        sleep_ms(1000);
}

static long fill_file(const char *path, uint8_t byte, uint32_t pages)
{
    static uint8_t piece[PAGE];
    memset(piece, byte, PAGE);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC);
    if (fd < 0)
        return fd;
    for (uint32_t page = 0; page < pages; page++)
        if (pwrite(fd, piece, PAGE, page * PAGE) != PAGE)
            return -E_IO;
    return close(fd);
}

/* 8 pages mapped and read, the file truncated to one, another file written
 * (FS may give it the freed blocks): page 0 still reads, page 5 ends the
 * process (exit code 135), never showing the other file's bytes. */
static int truncate_command(const char *path)
{
    long error = write_pattern(path, 8 * PAGE);
    int fd = open(path, O_RDWR);
    uint8_t *mapped = mmap(NULL, 8 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    check("map", error == 0 && mapped != MAP_FAILED, mmap_error());
    if (mapped == MAP_FAILED)
        return 1;
    check("mapped before", mismatched_pages(fd, mapped, 0, 8 * PAGE) == 0, 0);
    check("truncate", ftruncate(fd, PAGE) == 0, 0);
    long other = fill_file("/mmaptest.other", 0x5a, 16);
    check("another file written", other == 0, other);
    check("page 0 still the file's", mapped[7] == pattern(7), mapped[7]);
    printf("mmaptest: touching page 5 after the truncate\n");
    volatile uint8_t past = mapped[5 * PAGE];
    printf("mmaptest: read %u past the end after the truncate: not ended\n", past);
    return 2;
}

static int unlink_command(const char *path)
{
    long lent_before = blk_lent_now();
    long error = write_pattern(path, 8 * PAGE);
    int fd = open(path, O_RDONLY);
    uint8_t *mapped = mmap(NULL, 8 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    check("map", error == 0 && mapped != MAP_FAILED, mmap_error());
    if (mapped == MAP_FAILED)
        return 1;
    check("read a page before", mapped[PAGE + 1] == pattern(PAGE + 1), mapped[PAGE + 1]);
    check("unlink", unlink(path) == 0, 0);
    check("close", close(fd) == 0, 0);
    struct file_status status;
    check("the name is gone", stat(path, &status) == -E_NOT_FOUND, 0);
    long other = fill_file("/mmaptest.other", 0x5a, 16);
    check("another file written", other == 0, other);
    uint32_t wrong = 0;
    for (uint64_t at = 0; at < 8 * PAGE; at++)
        wrong += mapped[at] != pattern(at);
    check("still the unlinked file's bytes", wrong == 0, wrong);
    check("unmap", munmap(mapped, 8 * PAGE) == 0, 0);
    long lent_after = blk_lent_now();
    check("lends all ended", lent_after == lent_before, lent_after - lent_before);
    return failures == 0 ? 0 : 1;
}

static int advise_command(const char *path)
{
    long lent_before = blk_lent_now();
    long error = write_pattern(path, 64 * PAGE);
    int fd = open(path, O_RDONLY);
    uint8_t *mapped = mmap(NULL, 64 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    check("map", error == 0 && mapped != MAP_FAILED, mmap_error());
    if (mapped == MAP_FAILED)
        return 1;
    check("sequential", madvise(mapped, 64 * PAGE, MADV_SEQUENTIAL) == 0, 0);
    check("will need", madvise(mapped, 64 * PAGE, MADV_WILLNEED) == 0, 0);
    long lent = blk_lent_now();
    check("will need mapped the range", lent - lent_before >= 64, lent - lent_before);
    check("don't need", madvise(mapped, 64 * PAGE, MADV_DONTNEED) == 0, 0);
    lent = blk_lent_now();
    check("don't need ended its lends", lent == lent_before, lent - lent_before);
    check("normal", madvise(mapped, 64 * PAGE, MADV_NORMAL) == 0, 0);
    check("read again after don't need", mismatched_pages(fd, mapped, 0, 64 * PAGE) == 0, 0);
    check("range past the region", madvise(mapped, 65 * PAGE, MADV_DONTNEED) == -E_INVALID, 0);
    check("unaligned", madvise(mapped + 1, PAGE, MADV_WILLNEED) == -E_INVALID, 0);
    check("outside a mapping", madvise((void *)0x1000, PAGE, MADV_NORMAL) == -E_INVALID, 0);
    check("unmap", munmap(mapped, 64 * PAGE) == 0, 0);
    close(fd);
    return failures == 0 ? 0 : 1;
}

/* A line of text in each of 2 pages: SYS_CONSOLE_WRITE given a mapped
 * page the program never touched (the kernel brings it in, as a fault
 * would), then one past the end (refused with -E_FAULT, the program goes
 * on). */
static int syscall_command(const char *path)
{
    static const char line[] = "mmaptest: printed from a mapped page\n";
    static uint8_t page[PAGE];
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC);
    memset(page, ' ', PAGE);
    memcpy(page, line, sizeof(line) - 1);
    long written = pwrite(fd, page, PAGE, 0) + pwrite(fd, page, PAGE, PAGE);
    uint8_t *mapped = mmap(NULL, 3 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    check("map", written == 2 * PAGE && mapped != MAP_FAILED, mmap_error());
    if (mapped == MAP_FAILED)
        return 1;
    long printed = system_call_console_write(mapped + PAGE, sizeof(line) - 1);
    check("a system call reads an untouched mapped page", printed == sizeof(line) - 1, printed);
    long refused = system_call_console_write(mapped + 2 * PAGE, 16);
    check("a page past the end refused to a system call", refused == -E_FAULT, refused);
    check("still running after it", mapped[0] == 'm', mapped[0]);
    check("unmap", munmap(mapped, 3 * PAGE) == 0, 0);
    close(fd);
    return failures == 0 ? 0 : 1;
}

/* 64 pages mapped shared, 16 of them read and one stored into and synced;
 * then 3 s in which the test kills FS and BLK; then every page read, one
 * more stored into and synced: faults go to the restarted servers. */
static int restart_command(const char *path)
{
    long error = write_pattern(path, 64 * PAGE);
    int fd = open(path, O_RDWR);
    uint8_t *mapped = mmap(NULL, 64 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    check("map", error == 0 && mapped != MAP_FAILED, mmap_error());
    if (mapped == MAP_FAILED)
        return 1;
    check("read before", mismatched_pages(fd, mapped, 0, 16 * PAGE) == 0, 0);
    mapped[PAGE + 2] = 0xa1;
    check("msync before", msync(mapped, 64 * PAGE, MS_SYNC) == 0, 0);
    printf("@json {\"kind\":\"mmap_waiting\"}\n");
    sleep_ms(3000);
    uint8_t *expected = malloc(64 * PAGE);
    check("room", expected != NULL, 0);
    if (expected == NULL)
        return 1;
    uint32_t wrong = 0;
    for (uint64_t at = 0; at < 64 * PAGE; at++)
        wrong += mapped[at] != (at == PAGE + 2 ? 0xa1 : pattern(at));
    check("every page after the restarts", wrong == 0, wrong);
    mapped[40 * PAGE + 3] = 0xb2;
    check("msync after", msync(mapped, 64 * PAGE, MS_SYNC) == 0, 0);
    check("pread sees both stores",
          pread_byte(fd, PAGE + 2) == 0xa1 && pread_byte(fd, 40 * PAGE + 3) == 0xb2,
          pread_byte(fd, 40 * PAGE + 3));
    check("unmap", munmap(mapped, 64 * PAGE) == 0, 0);
    close(fd);
    free(expected);
    return failures == 0 ? 0 : 1;
}

static int quota_command(const char *path)
{
    long error = write_pattern(path, 256 * PAGE);
    int fd = open(path, O_RDWR);
    check("write", error == 0 && fd >= 0, error);
    void *huge = mmap(NULL, 32ull << 30, PROT_READ, MAP_SHARED, fd, 0);
    check("page tables past the account refused", huge == MAP_FAILED && mmap_error() == -E_QUOTA,
          mmap_error());
    uint8_t *first = NULL;
    uint32_t moved = 0, wrong = 0;
    for (uint32_t cycle = 0; cycle < 300; cycle++) {
        uint8_t *mapped = mmap(NULL, 1 << 20, PROT_READ, MAP_SHARED, fd, 0);
        if (mapped == MAP_FAILED) {
            check("a cycle's mmap", false, mmap_error());
            return 1;
        }
        first = first == NULL ? mapped : first;
        moved += mapped != first;
        wrong += mapped[cycle * 997 % (1 << 20)] != pattern(cycle * 997 % (1 << 20));
        munmap(mapped, 1 << 20);
    }
    check("300 cycles in one place", moved == 0 && wrong == 0, moved + wrong);
    check("grow with holes", ftruncate(fd, 2048 * PAGE) == 0, 0);
    uint8_t *copies = mmap(NULL, 2048 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    check("map private", copies != MAP_FAILED, mmap_error());
    if (copies == MAP_FAILED)
        return 1;
    printf("mmaptest: storing into 2048 private pages, past the account's 4 MiB\n");
    for (uint32_t page = 0; page < 2048; page++)
        copies[page * PAGE] = 1;
    printf("mmaptest: 2048 private copies made: not refused\n");
    return 2;
}

/* Pages [first, first + count) of a mapping at `mapped` (file offset 0)
 * that differ from pread's bytes. */
static long mismatched_part(int fd, const uint8_t *mapped, uint32_t first, uint32_t count)
{
    return mismatched_pages(fd, mapped + first * PAGE, first * PAGE, count * PAGE);
}

/* 24 pages mapped shared and read, then its head (4 pages), tail (4) and
 * middle (2, splitting it) unmapped: the parts left still read the file's
 * bytes, a second mapping cut before any fault faults each part at its own
 * file offset, msync sees the split, and one munmap over both parts and the
 * gaps between them ends the rest. */
static int partial_command(const char *path)
{
    long lent_before = blk_lent_now();
    long error = write_pattern(path, 24 * PAGE);
    int fd = open(path, O_RDWR);
    uint8_t *warm = mmap(NULL, 24 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    uint8_t *cold = mmap(NULL, 24 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    check("map", error == 0 && warm != MAP_FAILED && cold != MAP_FAILED, mmap_error());
    if (warm == MAP_FAILED || cold == MAP_FAILED)
        return 1;
    check("read before", mismatched_part(fd, warm, 0, 24) == 0, 0);
    check("unmap the head", munmap(warm, 4 * PAGE) == 0, 0);
    check("unmap the tail", munmap(warm + 20 * PAGE, 4 * PAGE) == 0, 0);
    check("unmap the middle", munmap(warm + 10 * PAGE, 2 * PAGE) == 0, 0);
    check("the parts left equal pread",
          mismatched_part(fd, warm, 4, 6) == 0 && mismatched_part(fd, warm, 12, 8) == 0, 0);
    check("cut before a fault", munmap(cold + 8 * PAGE, 3 * PAGE) == 0, 0);
    check("each part faults at its own offset",
          mismatched_part(fd, cold, 0, 8) == 0 && mismatched_part(fd, cold, 11, 13) == 0, 0);
    cold[15 * PAGE + 1] = 0x3c; /* a store into the tail part: its handle is the region's */
    check("msync of the tail part", msync(cold + 11 * PAGE, 13 * PAGE, MS_SYNC) == 0, 0);
    check("pread sees the tail's store", pread_byte(fd, 15 * PAGE + 1) == 0x3c,
          pread_byte(fd, 15 * PAGE + 1));
    check("msync of the unmapped middle", msync(cold + 8 * PAGE, PAGE, MS_SYNC) == -E_INVALID, 0);
    check("unaligned refused", munmap(warm + 5, PAGE) == -E_INVALID, 0);
    check("length 0 refused", munmap(warm + 4 * PAGE, 0) == -E_INVALID, 0);
    check("a range that wraps refused", munmap(warm, (size_t)0 - 2 * PAGE) == -E_INVALID, 0);
    check("unmap over parts and gaps", munmap(warm, 24 * PAGE) == 0, 0);
    check("unmap the cold parts", munmap(cold, 24 * PAGE) == 0, 0);
    check("unmap of nothing", munmap(warm, 24 * PAGE) == 0, 0);
    close(fd);
    long lent_after = blk_lent_now();
    check("lends all ended", lent_after == lent_before, lent_after - lent_before);
    return failures == 0 ? 0 : 1;
}

/* 8 pages mapped privately, page 2 stored into (a private copy), the
 * middle (page 2's copy and page 3's lend) unmapped: page 1 and page 5
 * still read, then page 2 is touched and ends the program as a fault on
 * unmapped memory (exit code 142). */
static int unmapped_command(const char *path)
{
    long error = write_pattern(path, 8 * PAGE);
    int fd = open(path, O_RDWR);
    uint8_t *mapped = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    check("map", error == 0 && mapped != MAP_FAILED, mmap_error());
    if (mapped == MAP_FAILED)
        return 1;
    mapped[2 * PAGE] = 0x11;
    check("read page 3", mapped[3 * PAGE + 7] == pattern(3 * PAGE + 7), mapped[3 * PAGE + 7]);
    check("unmap pages 2 and 3", munmap(mapped + 2 * PAGE, 2 * PAGE) == 0, 0);
    check("pages 1 and 5 still read",
          mapped[PAGE + 9] == pattern(PAGE + 9) && mapped[5 * PAGE] == pattern(5 * PAGE), 0);
    printf("mmaptest: touching an unmapped page (its private copy freed)\n");
    volatile uint8_t gone = mapped[2 * PAGE + 7];
    printf("mmaptest: read %u from an unmapped page: not ended\n", gone);
    return 2;
}

/* A MAP_FIXED mapping of another file over pages 4-7 of a 16-page one
 * replaces them (the rest stays the first file's); refused: unaligned, outside
 * the window, past its end (nothing unmapped then). */
static int fixed_command(const char *path)
{
    long lent_before = blk_lent_now();
    long error = write_pattern(path, 16 * PAGE);
    long other = fill_file("/mmaptest.fixed", 0x5a, 4);
    int fd = open(path, O_RDONLY), other_fd = open("/mmaptest.fixed", O_RDONLY);
    uint8_t *mapped = mmap(NULL, 16 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    check("map", error == 0 && other == 0 && mapped != MAP_FAILED, mmap_error());
    if (mapped == MAP_FAILED)
        return 1;
    check("read before", mismatched_part(fd, mapped, 0, 16) == 0, 0);
    uint8_t *over =
        mmap(mapped + 4 * PAGE, 4 * PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, other_fd, 0);
    check("fixed over a part", over == mapped + 4 * PAGE, mmap_error());
    uint32_t wrong = 0;
    for (uint64_t at = 4 * PAGE; at < 8 * PAGE; at++)
        wrong += mapped[at] != 0x5a;
    check("the part shows the other file", wrong == 0, wrong);
    check("the rest is the first file's",
          mismatched_part(fd, mapped, 0, 4) == 0 && mismatched_part(fd, mapped, 8, 8) == 0, 0);
    expect_refused("fixed unaligned",
                   mmap(mapped + 100, PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, other_fd, 0),
                   -E_INVALID);
    uint8_t *window_end = (uint8_t *)(FILE_REGION_BASE + FILE_REGION_WINDOW_BYTES);
    expect_refused("fixed past the window's end",
                   mmap(window_end - PAGE, 2 * PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0),
                   -E_INVALID);
    expect_refused(
        "fixed too large over the mapping",
        mmap(mapped, FILE_REGION_MAX_BYTES + PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0),
        -E_INVALID);
    check("a refused fixed unmapped nothing",
          mapped[0] == pattern(0) && mapped[4 * PAGE] == 0x5a &&
              mapped[9 * PAGE] == pattern(9 * PAGE),
          0);
    check("unmap all three", munmap(mapped, 16 * PAGE) == 0, 0);
    close(fd);
    close(other_fd);
    long lent_after = blk_lent_now();
    check("lends all ended", lent_after == lent_before, lent_after - lent_before);
    return failures == 0 ? 0 : 1;
}

/* MADV_DONTNEED on a private mapping with stores (pages 1 and 2, and a
 * hole): its copies go, the next reads show the file's bytes again; on a
 * shared one: its lends end, the next reads fault them back; on a hole of
 * a shared read-only one (zeroes of the process's own): a write() into the
 * hole is seen after it. */
static int dontneed_command(const char *path)
{
    long lent_before = blk_lent_now();
    long error = write_pattern(path, 8 * PAGE);
    int fd = open(path, O_RDWR);
    check("grow with a hole", error == 0 && ftruncate(fd, 10 * PAGE) == 0, error);
    uint8_t *copies = mmap(NULL, 10 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    uint8_t *shared = mmap(NULL, 8 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    check("map", copies != MAP_FAILED && shared != MAP_FAILED, mmap_error());
    if (copies == MAP_FAILED || shared == MAP_FAILED)
        return 1;
    memset(copies + PAGE, 0xe1, 2 * PAGE);
    copies[9 * PAGE] = 0xe2;
    check("stores seen", copies[PAGE] == 0xe1 && copies[9 * PAGE] == 0xe2, copies[PAGE]);
    check("don't need, private", madvise(copies, 10 * PAGE, MADV_DONTNEED) == 0, 0);
    check("private reads equal pread again", mismatched_part(fd, copies, 0, 8) == 0,
          mismatched_part(fd, copies, 0, 8));
    check("the hole reads zeroes again", copies[9 * PAGE] == 0, copies[9 * PAGE]);
    check("shared read", mismatched_part(fd, shared, 0, 8) == 0, 0);
    check("don't need, shared", madvise(shared, 8 * PAGE, MADV_DONTNEED) == 0, 0);
    check("shared reads again", mismatched_part(fd, shared, 0, 8) == 0, 0);
    uint8_t *hole = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 9 * PAGE);
    check("a shared read-only hole reads zeroes", hole != MAP_FAILED && hole[5] == 0, mmap_error());
    uint8_t written = 0x6b;
    check("hole written", pwrite(fd, &written, 1, 9 * PAGE + 5) == 1, 0);
    check("don't need, the hole", hole != MAP_FAILED && madvise(hole, PAGE, MADV_DONTNEED) == 0, 0);
    check("the hole's write seen", hole != MAP_FAILED && hole[5] == 0x6b,
          hole != MAP_FAILED ? hole[5] : 0);
    check("unmap",
          munmap(copies, 10 * PAGE) == 0 && munmap(shared, 8 * PAGE) == 0 &&
              munmap(hole, PAGE) == 0,
          0);
    close(fd);
    long lent_after = blk_lent_now();
    check("lends all ended", lent_after == lent_before, lent_after - lent_before);
    return failures == 0 ? 0 : 1;
}

/* 300 cycles in a small account: a private mapping of 1 MiB with a store
 * in its head, middle and tail (private copies, at other pages each cycle),
 * its middle unmapped (split), its head, then a page of the tail read
 * (a fault on the split's handle), then the rest. Each page stored into
 * reads the file's bytes first: a copy left mapped by an earlier cycle
 * would show. A leaked record or FS handle ends the loop (a 17th region,
 * FS's 128 handles a process), so would a copy charged and never freed
 * (the account's 4 MiB). */
static int cycles_command(const char *path)
{
    long error = write_pattern(path, 256 * PAGE);
    int fd = open(path, O_RDWR);
    check("write", error == 0 && fd >= 0, error);
    uint32_t moved = 0, wrong = 0;
    uint8_t *first = NULL;
    for (uint32_t cycle = 0; cycle < 300; cycle++) {
        uint8_t *mapped = mmap(NULL, 256 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (mapped == MAP_FAILED) {
            check("a cycle's mmap", false, mmap_error());
            return 1;
        }
        first = first == NULL ? mapped : first;
        moved += mapped != first;
        uint32_t head = cycle * 7 % 100, middle = 100 + cycle * 7 % 50,
                 tail = 150 + cycle * 7 % 106;
        /* the file's bytes, never a copy an earlier cycle left there */
        wrong += mapped[head * PAGE] != pattern(head * PAGE);
        wrong += mapped[middle * PAGE] != pattern(middle * PAGE);
        wrong += mapped[tail * PAGE] != pattern(tail * PAGE);
        mapped[head * PAGE] = mapped[middle * PAGE] = mapped[tail * PAGE] = (uint8_t)~cycle;
        long cut = munmap(mapped + 100 * PAGE, 50 * PAGE);
        cut = cut != 0 ? cut : munmap(mapped, 100 * PAGE);
        uint32_t page = 150 + cycle * 13 % 106; /* maybe never touched: a fault on the split */
        wrong += mapped[page * PAGE + 1] != pattern(page * PAGE + 1);
        wrong += mapped[tail * PAGE] != (uint8_t)~cycle;
        cut = cut != 0 ? cut : munmap(mapped + 150 * PAGE, 106 * PAGE);
        if (cut != 0) {
            check("a cycle's munmap", false, cut);
            return 1;
        }
    }
    check("300 partial cycles", moved == 0 && wrong == 0, moved + wrong);
    return failures == 0 ? 0 : 1;
}

/* What the caller's account may still count (SYS_MEMORY_REPORT's
 * `available`, which a small account's limit bounds), or an error. */
static long account_available(void)
{
    struct memory_report report = {0};
    long error = memory_report_get(&report);
    return error != 0 ? error : (long)report.available;
}

/* Private copies of holes (frames of the process's own, no lend) stored
 * into from `copies` on while the account may still count more than
 * `leave`; how many. */
static uint32_t copies_until_left(uint8_t *copies, uint32_t pages, long leave)
{
    uint32_t page = 0;
    while (page < pages && account_available() > leave)
        copies[page++ * PAGE] = 1;
    return page;
}

/* In an account of 4 MiB (test_mmap: run --memory 4M): private copies of
 * holes first leave it 1 MiB, less than the per-process bound's 2 MiB of
 * lends, then MIB MiB mapped shared and read whole must equal pread: the
 * faults end the process's own lends to stay within the account. The
 * lends count while mapped, and what the account may count comes back to
 * what it was after munmap. */
static int account_command(const char *path, uint64_t mib)
{
    uint64_t bytes = mib << 20;
    long error = write_pattern(path, bytes);
    int fd = open(path, O_RDWR);
    check("write", error == 0 && fd >= 0, error);
    static uint8_t warm[PAGE];
    check("pread", pread(fd, warm, PAGE, 0) == PAGE, 0); /* its buffers taken before counting */
    int holes = open("/account.holes", O_RDWR | O_CREAT | O_TRUNC);
    check("holes", holes >= 0 && ftruncate(holes, 1024 * PAGE) == 0, holes);
    uint8_t *copies = mmap(NULL, 1024 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, holes, 0);
    check("map private holes", copies != MAP_FAILED, mmap_error());
    if (copies == MAP_FAILED)
        return 1;
    uint8_t *mapped = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    check("map shared", mapped != MAP_FAILED, mmap_error());
    if (mapped == MAP_FAILED)
        return 1;
    munmap(mapped, bytes); /* the region's tables stay: mapped again there, it costs none */
    uint32_t copied = copies_until_left(copies, 1024, 1l << 20);
    long before = account_available();
    printf("mmaptest: %u private copies; the account may count %ld KiB more\n", copied,
           before / 1024);
    check("copies leave 1 MiB or less", before > 0 && before <= (1l << 20), before);
    uint8_t *again = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
    check("map again in the same place", again == mapped, mmap_error());
    if (again == MAP_FAILED)
        return 1;
    long mismatches = mismatched_pages(fd, again, 0, bytes);
    long mapped_left = account_available();
    check("mapped pages equal pread within the account", mismatches == 0, mismatches);
    check("the lends count in the account", before - mapped_left >= 64 * (long)PAGE,
          before - mapped_left);
    check("unmap", munmap(again, bytes) == 0, 0);
    long after = account_available();
    check("the account's use back after munmap", after == before, after - before);
    printf("@json {\"kind\":\"mmap_account\",\"before\":%ld,\"mapped\":%ld,\"after\":%ld}\n",
           before, mapped_left, after);
    munmap(copies, 1024 * PAGE);
    close(holes);
    close(fd);
    return failures == 0 ? 0 : 1;
}

/* In an account of 4 MiB: private copies of holes fill it to its limit,
 * then a mapped page of the file is read, with no lend held to give back:
 * the fault is refused (-E_QUOTA) and the program ends as by a page fault
 * (142). Both regions are mapped first, so their tables are paid for. */
static int account_full_command(const char *path)
{
    long error = write_pattern(path, 16 * PAGE);
    int fd = open(path, O_RDWR);
    check("write", error == 0 && fd >= 0, error);
    check("grow with holes", ftruncate(fd, (16 + 1024) * PAGE) == 0, 0);
    const uint8_t *file = mmap(NULL, 16 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
    uint8_t *copies = mmap(NULL, 1024 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 16 * PAGE);
    check("map", file != MAP_FAILED && copies != MAP_FAILED, mmap_error());
    if (file == MAP_FAILED || copies == MAP_FAILED)
        return 1;
    uint32_t copied = copies_until_left(copies, 1024, 0);
    long left = account_available();
    check("copies fill the account", left == 0, left);
    printf("mmaptest: %u private copies fill the account; reading a mapped page\n", copied);
    printf("mmaptest: read %u: not refused\n", file[5]);
    return 2;
}

int main(int argc, char **argv)
{
    const char *command = argc >= 2 ? argv[1] : "";
    if (strcmp(command, "read") == 0 && argc == 4)
        return read_command(argv[2], strtoul(argv[3], NULL, 10));
    if (strcmp(command, "evict") == 0 && (argc == 4 || (argc == 5 && !strcmp(argv[4], "msync"))))
        return evict_command(argv[2], strtoul(argv[3], NULL, 10), argc == 5);
    if (strcmp(command, "errors") == 0 && argc == 3)
        return errors_command(argv[2]);
    if (strcmp(command, "other") == 0 && argc == 3)
        return other_command(argv[2]);
    if (strcmp(command, "pastend") == 0 && argc == 3)
        return past_end_command(argv[2]);
    if (strcmp(command, "private") == 0 && argc == 3)
        return private_command(argv[2]);
    if (strcmp(command, "shared") == 0 && argc == 3)
        return shared_command(argv[2]);
    if (strcmp(command, "crash") == 0 && argc == 3)
        return crash_command(argv[2]);
    if (strcmp(command, "truncate") == 0 && argc == 3)
        return truncate_command(argv[2]);
    if (strcmp(command, "unlink") == 0 && argc == 3)
        return unlink_command(argv[2]);
    if (strcmp(command, "advise") == 0 && argc == 3)
        return advise_command(argv[2]);
    if (strcmp(command, "syscall") == 0 && argc == 3)
        return syscall_command(argv[2]);
    if (strcmp(command, "restart") == 0 && argc == 3)
        return restart_command(argv[2]);
    if (strcmp(command, "quota") == 0 && argc == 3)
        return quota_command(argv[2]);
    if (strcmp(command, "partial") == 0 && argc == 3)
        return partial_command(argv[2]);
    if (strcmp(command, "unmapped") == 0 && argc == 3)
        return unmapped_command(argv[2]);
    if (strcmp(command, "fixed") == 0 && argc == 3)
        return fixed_command(argv[2]);
    if (strcmp(command, "dontneed") == 0 && argc == 3)
        return dontneed_command(argv[2]);
    if (strcmp(command, "cycles") == 0 && argc == 3)
        return cycles_command(argv[2]);
    if (strcmp(command, "account") == 0 && argc == 4)
        return account_command(argv[2], strtoul(argv[3], NULL, 10));
    if (strcmp(command, "accountfull") == 0 && argc == 3)
        return account_full_command(argv[2]);
    if (strcmp(command, "keep") == 0 && argc == 3)
        return keep_command(argv[2]);
    if (strcmp(command, "lent") == 0) {
        long lent = blk_lent_now();
        printf("@json {\"kind\":\"mmap_lent\",\"blocks\":%ld}\n", lent);
        return lent < 0 ? 1 : 0;
    }
    printf(
        "usage: mmaptest read PATH MIB | evict PATH MIB [msync] | errors PATH | other PATH | "
        "pastend PATH "
        "| keep PATH "
        "| private PATH | shared PATH | crash PATH | truncate PATH | unlink PATH | advise PATH | "
        "partial PATH | unmapped PATH | fixed PATH | dontneed PATH | cycles PATH | account PATH "
        "MIB "
        "| accountfull PATH | lent\n");
    return 2;
}
