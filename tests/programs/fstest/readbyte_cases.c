/* readbyte_cases.c: the file library's readbyte buffer (lib/readbyte.c)
 * against the process's own writes: a write inside one buffered block,
 * across two, across three (larger than a block), past a buffered last
 * block's bytes (which drops it), and a write further on that makes a
 * buffered partial last block whole (the file grows past it) must all read
 * back at once, and match what FS holds once the buffer is dropped. A model
 * of the file is kept here and compared byte for byte. */
#include "cases.h"
#include "report.h"
#include <formica/file.h>
#include <formica/storage.h>
#include <string.h>

#define RB_FILE_BYTES (3u * STORAGE_BLOCK_BYTES + 100u) /* the last block is partial */
#define RB_MODEL_BYTES (4u * STORAGE_BLOCK_BYTES)
#define RB_PAST_END (RB_FILE_BYTES + 200u) /* a write that leaves a 200-byte hole */

static uint8_t model[RB_MODEL_BYTES];
static uint8_t read_back[RB_MODEL_BYTES];
static uint64_t model_size;

/* Writes `length` bytes of `value` at `offset` with writebyte, and into the model. */
static bool write_bytes(int fd, uint64_t offset, uint32_t length, uint8_t value)
{
    uint8_t bytes[2 * STORAGE_BLOCK_BYTES];
    memset(bytes, value, length);
    memcpy(model + offset, bytes, length);
    if (offset + length > model_size)
        model_size = offset + length;
    return writebyte(fd, length, offset, bytes) == (long)length;
}

/* readbyte of [offset, offset + length) equals the model there. */
static bool reads_as_model(int fd, uint64_t offset, uint32_t length)
{
    memset(read_back, 0xee, length);
    return readbyte(fd, length, offset, read_back) == (long)length &&
           memcmp(read_back, model + offset, length) == 0;
}

/* Buffers every block of the file: one byte of each through readbyte. */
static bool buffer_every_block(int fd)
{
    bool ok = true;
    for (uint64_t offset = 0; offset < model_size; offset += STORAGE_BLOCK_BYTES)
        ok &= reads_as_model(fd, offset, 1);
    return ok;
}

#define RB_GROWN_LAST_BYTES 100u /* the buffered last block's bytes before the file grows */

/* A partial last block buffered, then the file grown past it by a write two
 * blocks further on: the block is whole now (its new bytes a hole, zeros),
 * and readbyte must return as many bytes as pread, the same ones. */
static void run_readbyte_growth_case(void)
{
    int fd = open("/fstest/rgrow.bin", O_RDWR | O_CREAT | O_TRUNC);
    memset(model, 0, sizeof model);
    model_size = STORAGE_BLOCK_BYTES + RB_GROWN_LAST_BYTES;
    bool made = fd >= 0 && ftruncate(fd, model_size) == 0 &&
                reads_as_model(fd, STORAGE_BLOCK_BYTES, RB_GROWN_LAST_BYTES);
    report("readbyte_partial_last_block_buffered", made, fd);
    bool grown = write_bytes(fd, 3 * STORAGE_BLOCK_BYTES, 16, 0xe5);
    long got = readbyte(fd, 1000, STORAGE_BLOCK_BYTES, read_back);
    uint8_t from_fs[1000];
    long read = pread(fd, from_fs, sizeof from_fs, STORAGE_BLOCK_BYTES);
    report("readbyte_after_growth_past_buffered_block",
           grown && got == 1000 && read == 1000 &&
               memcmp(read_back, model + STORAGE_BLOCK_BYTES, 1000) == 0 &&
               memcmp(from_fs, read_back, 1000) == 0,
           got);
    report("readbyte_grown_file_buffered", reads_as_model(fd, 0, (uint32_t)model_size), 0);
    report("readbyte_grown_close", close(fd) == 0, 0);
}

void run_readbyte_cases(void)
{
    int fd = open("/fstest/rbuf.bin", O_RDWR | O_CREAT | O_TRUNC);
    fill_pattern(model, 9, 0, RB_FILE_BYTES);
    model_size = RB_FILE_BYTES;
    bool made = fd >= 0 && pwrite(fd, model, RB_FILE_BYTES, 0) == RB_FILE_BYTES;
    report("readbyte_file", made && buffer_every_block(fd), fd);
    report("readbyte_one_block_write", write_bytes(fd, 100, 16, 0xa1) && reads_as_model(fd, 96, 24),
           0);
    report("readbyte_spanning_write",
           write_bytes(fd, STORAGE_BLOCK_BYTES - 16, 32, 0xb2) &&
               reads_as_model(fd, STORAGE_BLOCK_BYTES - 20, 40),
           0);
    report("readbyte_write_over_three_blocks",
           write_bytes(fd, 4000, STORAGE_BLOCK_BYTES + 300, 0xc3) &&
               reads_as_model(fd, 3990, STORAGE_BLOCK_BYTES + 320),
           0);
    report(
        "readbyte_write_past_buffered_end",
        write_bytes(fd, RB_PAST_END, 16, 0xd4) &&
            reads_as_model(fd, 3 * STORAGE_BLOCK_BYTES, RB_PAST_END + 16 - 3 * STORAGE_BLOCK_BYTES),
        0);
    report("readbyte_whole_file_buffered", reads_as_model(fd, 0, (uint32_t)model_size), 0);
    bool dropped = readbyte_invalidate(fd) == 0;
    report("readbyte_matches_fs", dropped && reads_as_model(fd, 0, (uint32_t)model_size), 0);
    report("readbyte_close", close(fd) == 0, 0);
    run_readbyte_growth_case();
}
