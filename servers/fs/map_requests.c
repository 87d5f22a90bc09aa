/* map_requests.c: FS's part of mmap (docs/mmap.md). FS_MAP checks an open
 * file for a mapping (the descriptor's mode decides what it may do) and
 * gives the region a handle of its own, which keeps the file while it is
 * mapped. FS_MAP_FAULT, sent by the kernel for a fault in a region, maps the
 * file's pages to disk blocks and rewrites the request into a BLK_MAP for
 * the shard that owns them, forwarded with direct return: BLK lends the
 * blocks into the process. Faults ask the ext2 library for the file's
 * blocks directly, not through the block map cache: FS clears that cache
 * before each request that does not leave it (a fault), so a fault that
 * filled it would make the next one clear every entry. */
#include "fs_server.h"
#include "block_client.h"
#include "block_map_cache.h"
#include <formica/errors.h>
#include <formica/file_region.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define MAP_KNOWN_FLAGS (MAP_SHARED | MAP_PRIVATE | MAP_FIXED)

/* What FS_MAP refuses of the mapping itself (the handle's access apart). */
static long check_mapping(const struct ica_control *page, const struct fs_map_message *message)
{
    uint32_t flags = message->flags;
    if (message->length == 0)
        return fs_refuse(page, "mmap of length 0");
    if (message->offset % STORAGE_BLOCK_BYTES != 0)
        return fs_refuse(page, "mmap offset not a multiple of 4096");
    if ((flags & ~MAP_KNOWN_FLAGS) != 0 ||
        ((flags & MAP_SHARED) != 0) == ((flags & MAP_PRIVATE) != 0))
        return fs_refuse(page, "mmap flags not one of MAP_SHARED and MAP_PRIVATE");
    if ((message->protection & ~(uint32_t)(PROT_READ | PROT_WRITE)) != 0)
        return fs_refuse(page, "unknown mmap protection");
    return 0;
}

/* The descriptor's mode: reading always, writing for a shared writable map. */
static long check_access(const struct ica_control *page, const struct open_file *file,
                         const struct fs_map_message *message)
{
    bool shared_write = (message->protection & PROT_WRITE) && (message->flags & MAP_SHARED);
    if (!(file->flags & OPEN_FILE_READ) || (shared_write && !(file->flags & OPEN_FILE_WRITE))) {
        printf("fs: mmap by pid %u refused: the handle is not open for %s\n", page->origin,
               (file->flags & OPEN_FILE_READ) ? "writing" : "reading");
        return -E_PERMISSION;
    }
    return 0;
}

/* The handlers are apart and cold: the serve loop's usual requests keep
 * their code as it was. */
__attribute__((noinline, cold)) long fs_map(struct fs_server *server, uint64_t control,
                                            struct fs_map_message *message)
{
    struct ica_control *page = ica_control_of(control);
    long error = 0;
    struct open_file *file = fs_handle_of(server, page, message->handle, 0, &error);
    if (file == NULL)
        return error;
    if (file->flags & (OPEN_FILE_DIRECTORY | OPEN_FILE_REMOVED)) {
        fs_refuse(page, "mmap of a directory");
        return -E_IS_DIRECTORY;
    }
    if ((error = check_mapping(page, message)) != 0 ||
        (error = check_access(page, file, message)) != 0)
        return error;
    if (server->fs.block_size != STORAGE_BLOCK_BYTES)
        return fs_refuse(page, "mmap needs a file system of 4 KiB blocks");
    struct ext2_stat stat;
    if ((error = ext2_stat(&server->fs, file->inode, &stat)) != 0)
        return error;
    uint32_t inode = file->inode, flags = file->flags & (OPEN_FILE_READ | OPEN_FILE_WRITE);
    uint64_t handle = 0;
    error = open_files_room(server->open_files, page->origin, page->sender_account);
    if (error == 0)
        error = open_files_add(server->open_files, page->origin, page->sender_account, inode,
                               flags | (file->flags & OPEN_FILE_UNLINKED), &handle);
    if (error != 0)
        return error;
    message->size = stat.size;
    return (long)handle;
}

/* Of `count` pages mapped to `blocks` from file page `first` in a file of
 * `size` bytes: how many from the first one BLK can lend in one BLK_MAP
 * (inside the file, no hole, one shard). */
static uint32_t lendable_run(const uint32_t *blocks, uint32_t count, uint64_t first, uint64_t size)
{
    uint64_t file_pages = (size + STORAGE_BLOCK_BYTES - 1) / STORAGE_BLOCK_BYTES;
    uint32_t shard = block_client_shard_of(blocks[0]);
    uint32_t run = 0;
    while (run < count && first + run < file_pages && blocks[run] != 0 &&
           block_client_shard_of(blocks[run]) == shard)
        run++;
    return run;
}

/* The control ICA becomes a BLK_MAP of `count` blocks for their shard. */
static long prepare_blk_map(struct fs_server *server, struct ica_control *page,
                            const uint32_t *blocks, uint32_t count)
{
    bool consecutive = true;
    for (uint32_t i = 1; i < count; i++)
        consecutive = consecutive && blocks[i] == blocks[0] + i;
    memset(page->message, 0, sizeof(page->message));
    page->operation = BLK_MAP;
    struct blk_map_message *map = blk_map_of(page);
    map->first_block = blocks[0];
    map->blocks = count;
    map->flags = consecutive ? 0 : BLK_BLOCK_LIST;
    if (!consecutive)
        memcpy(page->payload, blocks, count * sizeof(uint32_t));
    server->forward_shard = block_client_shard_of(blocks[0]);
    return FS_FORWARDED;
}

/* Allocates the hole at file page `first` (zeroes up to the file's end,
 * in the running transaction): its disk block, or an error. */
static long fill_hole(struct fs_server *server, const struct ica_control *page, uint32_t inode,
                      uint64_t first, uint64_t size, uint32_t *block)
{
    static const uint8_t zeroes[STORAGE_BLOCK_BYTES];
    uint64_t offset = first * STORAGE_BLOCK_BYTES;
    uint64_t length = size - offset < STORAGE_BLOCK_BYTES ? size - offset : STORAGE_BLOCK_BYTES;
    fs_act_for_sender(server, page); /* the sender's quota pays for the block */
    long written = ext2_write(&server->fs, inode, offset, zeroes, length);
    block_map_cache_clear(); /* the file has a block more */
    if (written < 0)
        return written;
    long error = ext2_file_blocks(&server->fs, inode, first, 1, block, &size);
    return error != 0 ? error : *block == 0 ? -E_NO_SPACE : 0;
}

/* A block whose newest bytes are in the running transaction (a hole just filled with a
 * block freed in it, a metadata block's copy) cannot be lent from BLK's cache yet: the
 * transaction is committed now, so the fault waits one commit, not the periodic one's 5 s
 * (which the kernel's retries of -E_BUSY would outlast). */
static long commit_if_held(struct fs_server *server, const uint32_t *block)
{
    if (!fs_journal_holds(server, block, 1))
        return 0;
    long error = fs_journal_fsync(server);
    if (error != 0)
        return error;
    return fs_journal_holds(server, block, 1) ? -E_BUSY : 0;
}

/* FS_MAP_FAULT of a store: one page, its hole filled, lent writable by BLK;
 * FS keeps no copy of the block from now on (stores change it behind FS). */
static long map_for_store(struct fs_server *server, struct ica_control *page,
                          const struct open_file *file, uint64_t first)
{
    if (!(file->flags & OPEN_FILE_WRITE)) {
        printf("fs: store to a mapping by pid %u refused: its handle is not open for writing\n",
               page->origin);
        return -E_PERMISSION;
    }
    uint32_t block = 0;
    uint64_t size = 0;
    long error = ext2_file_blocks(&server->fs, file->inode, first, 1, &block, &size);
    if (error != 0)
        return error;
    if (first * STORAGE_BLOCK_BYTES >= size)
        return -E_PAST_END;
    if (block == 0 && (error = fill_hole(server, page, file->inode, first, size, &block)) != 0)
        return error;
    if ((error = commit_if_held(server, &block)) != 0)
        return error;
    block_client_never_remember(block);
    long forwarded = prepare_blk_map(server, page, &block, 1);
    blk_map_of(page)->flags |= BLK_MAP_WRITABLE;
    return forwarded;
}

__attribute__((noinline, cold)) long fs_map_fault(struct fs_server *server, uint64_t control,
                                                  struct fs_map_fault_message *message)
{
    struct ica_control *page = ica_control_of(control);
    long error = 0;
    struct open_file *file =
        fs_regular_file_of(server, page, message->handle, OPEN_FILE_READ, &error);
    if (file == NULL)
        return error;
    uint64_t first = message->file_page;
    uint32_t pages = message->pages;
    if (pages == 0 || pages > FILE_REGION_FAULT_AROUND || first >= server->fs.max_file_blocks ||
        (message->flags & ~(FS_MAP_FAULT_WRITE | FS_MAP_FAULT_FILL_HOLES)) != 0)
        return fs_refuse(page, "map fault outside the largest file, or unknown flags");
    if (message->flags & FS_MAP_FAULT_WRITE)
        return map_for_store(server, page, file, first);
    uint32_t blocks[FILE_REGION_FAULT_AROUND] = {0};
    uint64_t size = 0;
    if (first + pages > server->fs.max_file_blocks)
        pages = (uint32_t)(server->fs.max_file_blocks - first);
    error = ext2_file_blocks(&server->fs, file->inode, first, pages, blocks, &size);
    if (error != 0)
        return error;
    if (first * STORAGE_BLOCK_BYTES >= size)
        return -E_PAST_END;
    uint32_t count = 0;
    if (blocks[0] == 0) { /* a hole: nothing of BLK's to lend, unless it is filled */
        if (!(message->flags & FS_MAP_FAULT_FILL_HOLES) || !(file->flags & OPEN_FILE_WRITE))
            return -E_NEEDS_DATA;
        if ((error = fill_hole(server, page, file->inode, first, size, &blocks[0])) != 0)
            return error;
        count = 1;
    } else {
        count = lendable_run(blocks, pages, first, size);
    }
    if ((error = commit_if_held(server, blocks)) != 0)
        return error;
    while (count > 1 && fs_journal_holds(server, blocks, count))
        count--;
    return prepare_blk_map(server, page, blocks, count);
}

__attribute__((noinline, cold)) long fs_msync(struct fs_server *server, uint64_t control,
                                              struct fs_msync_message *message)
{
    long error = 0;
    if (fs_handle_of(server, ica_control_of(control), message->handle, 0, &error) == NULL)
        return error;
    error = fs_journal_fsync(server); /* a hole a store filled: reachable after a crash */
    return error != 0 ? error : block_client_sync();
}
