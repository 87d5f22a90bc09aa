/* test_ext2_read.c: reads images made by mke2fs -d (1, 2 and 4 KiB blocks)
 * from a generated tree: files at every block-tree boundary up to triple
 * indirect (sparse), nested and big directories, long names, lookup errors. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "test_ext2_support.h"

#define MANY_FILES 200
#define TAIL_LENGTH 65541u

struct sample {
    char path[320];
    uint64_t size;
    bool sparse; /* data only in [0, 4096) and the last TAIL_LENGTH bytes */
};

struct tree {
    uint32_t block_size;
    struct sample samples[32];
    unsigned count;
    char image[256];
};

static uint32_t seed_of(const char *path)
{
    uint32_t hash = 2166136261u;
    for (; *path; path++)
        hash = (hash ^ (uint8_t)*path) * 16777619u;
    return hash;
}

static void write_range(int fd, uint32_t seed, uint64_t offset, uint64_t length)
{
    uint8_t buffer[65536];
    while (length > 0) {
        size_t chunk = length < sizeof buffer ? (size_t)length : sizeof buffer;
        pattern_fill(buffer, chunk, seed, offset);
        assert_int_equal(pwrite(fd, buffer, chunk, (off_t)offset), (ssize_t)chunk);
        offset += chunk;
        length -= chunk;
    }
}

static void make_file(const char *root, struct sample *sample)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, sample->path);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    assert_true(fd >= 0);
    uint32_t seed = seed_of(sample->path);
    if (sample->sparse) {
        write_range(fd, seed, 0, 4096);
        write_range(fd, seed, sample->size - TAIL_LENGTH, TAIL_LENGTH);
    } else {
        write_range(fd, seed, 0, sample->size);
    }
    assert_int_equal(ftruncate(fd, (off_t)sample->size), 0);
    close(fd);
}

static void add_sample(struct tree *tree, const char *path, uint64_t size, bool sparse)
{
    struct sample *sample = &tree->samples[tree->count++];
    snprintf(sample->path, sizeof sample->path, "%s", path);
    sample->size = size;
    sample->sparse = sparse;
}

static void plan_samples(struct tree *tree)
{
    uint64_t block = tree->block_size, pointers = block / 4;
    uint64_t single = EXT2_DIRECT_BLOCKS, dbl = single + pointers;
    uint64_t triple = dbl + pointers * pointers;
    char long_name[300];
    memset(long_name, 'n', 255);
    long_name[255] = '\0';
    add_sample(tree, "empty", 0, false);
    add_sample(tree, "one", 1, false);
    add_sample(tree, "block", block, false);
    add_sample(tree, "block_plus_one", block + 1, false);
    add_sample(tree, "direct_end", single * block, false);
    add_sample(tree, "single_start", single * block + 1, false);
    add_sample(tree, "single_middle", (single + 5) * block + 77, false);
    add_sample(tree, "double_start", dbl * block + 3 * block + 7, false);
    add_sample(tree, "nested/a/b/c/deep.txt", 5000, false);
    add_sample(tree, long_name, 300, false);
    add_sample(tree, "sparse_triple", triple * block + TAIL_LENGTH, true);
}

static void make_tree(struct tree *tree, uint32_t block_size)
{
    char root[512];
    memset(tree, 0, sizeof *tree);
    tree->block_size = block_size;
    plan_samples(tree);
    snprintf(root, sizeof root, "%s/tree-%u", scratch(), block_size);
    assert_int_equal(run("rm -rf %s && mkdir -p %s/nested/a/b/c %s/many", root, root, root), 0);
    for (unsigned i = 0; i < tree->count; i++)
        make_file(root, &tree->samples[i]);
    for (unsigned i = 0; i < MANY_FILES; i++) {
        struct sample sample = {.size = i * 37u};
        snprintf(sample.path, sizeof sample.path, "many/file_%03u", i);
        make_file(root, &sample);
    }
    snprintf(tree->image, sizeof tree->image, "%s/read-%u.img", scratch(), block_size);
    /* The 2 KiB image also has 128-byte inodes (the others mke2fs's 256). */
    assert_int_equal(run("mke2fs -q -F -t ext2 -r 1 -b %u %s -d %s %s 32M", block_size,
                         block_size == 2048 ? "-I 128" : "", root, tree->image),
                     0);
}

static void check_range(struct ext2_fs *fs, uint32_t inode, const struct sample *sample,
                        uint64_t offset, uint64_t length, bool hole)
{
    static uint8_t got[1 << 20];
    uint32_t seed = seed_of(sample->path);
    while (length > 0) {
        size_t chunk = length < 7777 * 13 ? (size_t)length : 7777 * 13;
        assert_int_equal(ext2_read(fs, inode, offset, got, chunk), (long)chunk);
        for (size_t i = 0; i < chunk; i++)
            if (got[i] != (hole ? 0 : pattern_byte(seed, offset + i)))
                fail_msg("%s: byte %llu differs", sample->path, (unsigned long long)(offset + i));
        offset += chunk;
        length -= chunk;
    }
}

static void check_sample(struct ext2_fs *fs, const struct sample *sample)
{
    uint32_t inode;
    struct ext2_stat stat;
    char path[400];
    snprintf(path, sizeof path, "/%s", sample->path);
    assert_int_equal(ext2_lookup(fs, path, &inode), 0);
    assert_int_equal(ext2_stat(fs, inode, &stat), 0);
    assert_int_equal(stat.size, sample->size);
    assert_int_equal(stat.mode & EXT2_S_IFMT, EXT2_S_IFREG);
    if (sample->sparse) {
        check_range(fs, inode, sample, 0, 4096, false);
        check_range(fs, inode, sample, 4096, 8192, true);
        check_range(fs, inode, sample, sample->size - TAIL_LENGTH, TAIL_LENGTH, false);
    } else {
        check_range(fs, inode, sample, 0, sample->size, false);
    }
    uint8_t byte;
    assert_int_equal(ext2_read(fs, inode, sample->size, &byte, 1), 0);
}

static void check_many(struct ext2_fs *fs)
{
    uint32_t directory;
    struct ext2_dirent entry;
    uint64_t cursor = 0;
    bool seen[MANY_FILES] = {false};
    unsigned count = 0;
    assert_int_equal(ext2_lookup(fs, "/many", &directory), 0);
    while (ext2_readdir(fs, directory, &cursor, &entry) == 1) {
        count++;
        unsigned number;
        if (sscanf(entry.name, "file_%03u", &number) == 1 && number < MANY_FILES) {
            assert_false(seen[number]);
            seen[number] = true;
            assert_int_equal(entry.file_type, EXT2_FT_REG_FILE);
        }
    }
    assert_int_equal(count, MANY_FILES + 2);
    for (unsigned i = 0; i < MANY_FILES; i++) {
        struct sample sample = {.size = i * 37u};
        snprintf(sample.path, sizeof sample.path, "many/file_%03u", i);
        check_sample(fs, &sample);
    }
}

static void check_lookup_errors(struct ext2_fs *fs)
{
    uint32_t inode, deep;
    char name[300], path[5000];
    assert_int_equal(ext2_lookup(fs, "/nested/a/b/c/deep.txt", &deep), 0);
    assert_int_equal(ext2_lookup(fs, "nested/./a/../a/b//c/deep.txt", &inode), 0);
    assert_int_equal(inode, deep);
    assert_int_equal(ext2_lookup(fs, "/..", &inode), 0);
    assert_int_equal(inode, EXT2_ROOT_INODE);
    assert_int_equal(ext2_lookup(fs, "/", &inode), 0);
    assert_int_equal(inode, EXT2_ROOT_INODE);
    assert_int_equal(ext2_lookup(fs, "/nested/missing", &inode), -E_NOT_FOUND);
    assert_int_equal(ext2_lookup(fs, "/one/x", &inode), -E_NOT_DIRECTORY);
    memset(name, 'x', 256);
    name[256] = '\0';
    assert_int_equal(ext2_lookup(fs, name, &inode), -E_NAME_TOO_LONG);
    memset(path, 'a', sizeof path - 1);
    for (size_t i = 1; i < sizeof path - 1; i += 2)
        path[i] = '/';
    path[sizeof path - 1] = '\0';
    assert_int_equal(ext2_lookup(fs, path, &inode), -E_TOO_BIG);
}

static void read_everything(uint32_t block_size)
{
    static struct tree tree;
    struct ext2_fs fs;
    struct test_disk disk;
    make_tree(&tree, block_size);
    mount_image(&fs, &disk, tree.image);
    assert_int_equal(fs.block_size, block_size);
    for (unsigned i = 0; i < tree.count; i++)
        check_sample(&fs, &tree.samples[i]);
    check_many(&fs);
    check_lookup_errors(&fs);
    assert_int_equal(disk.writes, 0);
    disk_close(&disk);
    assert_true(fsck_clean(tree.image));
}

static void test_read_1k(void **state)
{
    (void)state;
    read_everything(1024);
}

static void test_read_2k(void **state)
{
    (void)state;
    read_everything(2048);
}

static void test_read_4k(void **state)
{
    (void)state;
    read_everything(4096);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read_1k),
        cmocka_unit_test(test_read_2k),
        cmocka_unit_test(test_read_4k),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    run("rm -rf %s", scratch());
    return failed;
}
