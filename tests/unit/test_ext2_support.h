/* test_ext2_support.h: helpers of the ext2 unit tests: a file-backed
 * ext2_device, deterministic file contents, making images with mke2fs -d,
 * and checking them with e2fsck -fn and debugfs from the host's side. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ext2_internal.h"

struct test_disk {
    struct ext2_device device;
    int fd;
    bool fail_writes; /* a device error on every write */
    unsigned writes;
    unsigned superblock_writes; /* of those, to the block holding the superblock */
};

void disk_open(struct test_disk *disk, const char *image);
void disk_close(struct test_disk *disk);
void mount_image(struct ext2_fs *fs, struct test_disk *disk, const char *image);

uint8_t pattern_byte(uint32_t seed, uint64_t offset);
void pattern_fill(uint8_t *buffer, size_t length, uint32_t seed, uint64_t offset);

/* Runs a shell command (printf-style); returns its exit status. */
int run(const char *format, ...) __attribute__((format(printf, 1, 2)));
/* A scratch directory for this test program (created once). */
const char *scratch(void);
bool fsck_clean(const char *image);
/* debugfs -R "cat PATH": the file's bytes as the host sees them (malloc'd). */
uint8_t *host_cat(const char *image, const char *path, size_t *length);
bool files_equal(const char *left, const char *right);
/* debugfs set_inode_field: `path`'s `field` (mode, uid, ...) set to `value`
 * in `image`; 0 or debugfs's failure. */
int set_inode_field(const char *image, const char *path, const char *field, const char *value);
/* Inverts the byte at `offset` of the file `path` (a damage that always
 * changes it, whatever the byte was); 0 or -1. */
int flip_byte(const char *path, uint64_t offset);
/* The images differ at most in the superblock's error record (s_state and
 * ext4's error fields), as ext2_corrupt writes it. */
bool only_error_record_differs(const char *image, const char *copy);
/* The superblock's s_state and s_error_count as on disk. */
void error_state_of(const char *image, uint16_t *state, uint32_t *count);
