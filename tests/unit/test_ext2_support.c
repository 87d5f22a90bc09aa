/* test_ext2_support.c: the ext2 tests' helpers (see test_ext2_support.h):
 * pread/pwrite device, the content pattern, shell commands, e2fsck and
 * debugfs wrappers. Host code only. */
#include "test_ext2_support.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
#include <setjmp.h>
#include <cmocka.h>

static int disk_read(void *context, uint64_t block, uint32_t offset, void *buffer, uint32_t length)
{
    struct test_disk *disk = context;
    assert_true(offset + length <= disk->device.block_size);
    off_t position = (off_t)(block * disk->device.block_size + offset);
    ssize_t got = pread(disk->fd, buffer, length, position);
    return got == (ssize_t)length ? 0 : -E_IO;
}

static int disk_write(void *context, uint64_t block, const void *buffer)
{
    struct test_disk *disk = context;
    size_t size = disk->device.block_size;
    disk->writes++;
    if (block == (size == 1024 ? 1u : 0u))
        disk->superblock_writes++;
    if (disk->fail_writes)
        return -E_IO;
    ssize_t put = pwrite(disk->fd, buffer, size, (off_t)(block * size));
    return put == (ssize_t)size ? 0 : -E_IO;
}

void disk_open(struct test_disk *disk, const char *image)
{
    *disk = (struct test_disk){.device = {.read_bytes = disk_read, .write_block = disk_write}};
    disk->device.context = disk;
    disk->fd = open(image, O_RDWR);
    assert_true(disk->fd >= 0);
}

void disk_close(struct test_disk *disk)
{
    close(disk->fd);
}

void mount_image(struct ext2_fs *fs, struct test_disk *disk, const char *image)
{
    disk_open(disk, image);
    assert_int_equal(ext2_mount(fs, &disk->device), 0);
    fs->time = 1700000000;
}

uint8_t pattern_byte(uint32_t seed, uint64_t offset)
{
    uint64_t x = (offset + 1) * 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 32);
    return (uint8_t)(x >> 29);
}

void pattern_fill(uint8_t *buffer, size_t length, uint32_t seed, uint64_t offset)
{
    for (size_t i = 0; i < length; i++)
        buffer[i] = pattern_byte(seed, offset + i);
}

int run(const char *format, ...)
{
    char command[4096];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(command, sizeof command, format, arguments);
    va_end(arguments);
    int status = system(command);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int set_inode_field(const char *image, const char *path, const char *field, const char *value)
{
    return run("debugfs -w -R 'set_inode_field %s %s %s' %s >/dev/null 2>&1", path, field, value,
               image);
}

const char *scratch(void)
{
    static char path[256];
    if (path[0] == '\0') {
        snprintf(path, sizeof path, "/tmp/formica-ext2-%d", (int)getpid());
        run("rm -rf %s && mkdir -p %s", path, path);
    }
    return path;
}

bool fsck_clean(const char *image)
{
    int status = run("e2fsck -fn %s > %s/fsck.log 2>&1", image, scratch());
    if (status != 0)
        run("cat %s/fsck.log", scratch());
    return status == 0;
}

uint8_t *host_cat(const char *image, const char *path, size_t *length)
{
    char command[1024];
    snprintf(command, sizeof command, "debugfs -R 'cat %s' %s 2>/dev/null", path, image);
    FILE *pipe = popen(command, "r");
    assert_non_null(pipe);
    size_t capacity = 1 << 16, used = 0;
    uint8_t *data = malloc(capacity);
    size_t got;
    while ((got = fread(data + used, 1, capacity - used, pipe)) > 0) {
        used += got;
        if (used == capacity)
            data = realloc(data, capacity *= 2);
    }
    pclose(pipe);
    *length = used;
    return data;
}

bool files_equal(const char *left, const char *right)
{
    return run("cmp -s %s %s", left, right) == 0;
}

int flip_byte(const char *path, uint64_t offset)
{
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return -1;
    uint8_t byte;
    int result = -1;
    if (pread(fd, &byte, 1, (off_t)offset) == 1) {
        byte = (uint8_t)~byte;
        if (pwrite(fd, &byte, 1, (off_t)offset) == 1)
            result = 0;
    }
    close(fd);
    return result;
}

static uint8_t *read_whole(const char *path, size_t *length)
{
    FILE *file = fopen(path, "rb");
    assert_non_null(file);
    fseek(file, 0, SEEK_END);
    *length = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    uint8_t *data = malloc(*length);
    assert_int_equal(fread(data, 1, *length, file), *length);
    fclose(file);
    return data;
}

/* Superblock bytes ext2_corrupt may change. */
static bool in_error_record(size_t offset)
{
    return offset == 0x3A || offset == 0x3B || (offset >= EXT2_SB_ERROR_COUNT && offset < 0x200) ||
           offset == EXT2_SB_FIRST_ERROR_CODE || offset == EXT2_SB_LAST_ERROR_CODE;
}

bool only_error_record_differs(const char *image, const char *copy)
{
    size_t length, copy_length;
    uint8_t *left = read_whole(image, &length), *right = read_whole(copy, &copy_length);
    bool same = length == copy_length;
    for (size_t i = 0; same && i < length; i++) {
        bool superblock = i >= EXT2_SUPERBLOCK_OFFSET && i < 2 * EXT2_SUPERBLOCK_OFFSET;
        if (left[i] != right[i] && !(superblock && in_error_record(i - EXT2_SUPERBLOCK_OFFSET))) {
            printf("images differ at byte %zu\n", i);
            same = false;
        }
    }
    free(left);
    free(right);
    return same;
}

void error_state_of(const char *image, uint16_t *state, uint32_t *count)
{
    struct ext2_superblock superblock;
    FILE *file = fopen(image, "rb");
    assert_non_null(file);
    fseek(file, EXT2_SUPERBLOCK_OFFSET, SEEK_SET);
    assert_int_equal(fread(&superblock, sizeof superblock, 1, file), 1);
    fclose(file);
    *state = superblock.s_state;
    memcpy(count, (uint8_t *)&superblock + EXT2_SB_ERROR_COUNT, sizeof *count);
}
