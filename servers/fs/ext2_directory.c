/* ext2_directory.c: directory blocks: checking every entry (rec_len, name
 * length, inode number) and a first block's "." and "..", finding a name, adding an entry (in a
 * free slot or a new block), removing one, iterating for readdir, and a new directory's . and .. */
#include "ext2_internal.h"

static size_t entry_space(size_t name_length)
{
    return (EXT2_DIRECTORY_ENTRY_HEADER + name_length + 3) & ~(size_t)3;
}

static struct ext2_directory_entry *entry_at(uint8_t *block, uint32_t offset)
{
    return (struct ext2_directory_entry *)(block + offset);
}

/* The entries of a block must tile it exactly, each well formed and naming
 * no reserved inode but the root. */
static int check_directory_block(struct ext2_fs *fs, uint8_t *block, uint32_t physical)
{
    uint32_t offset = 0;
    while (offset < fs->block_size) {
        if (fs->block_size - offset < EXT2_DIRECTORY_ENTRY_HEADER)
            return ext2_corrupt(fs, 0, physical, "a directory entry crosses the block's end");
        struct ext2_directory_entry *entry = entry_at(block, offset);
        uint32_t length = entry->rec_len;
        if (length < EXT2_DIRECTORY_ENTRY_HEADER || length % 4 != 0 ||
            length > fs->block_size - offset)
            return ext2_corrupt(fs, 0, physical, "a directory entry's rec_len is wrong");
        if (EXT2_DIRECTORY_ENTRY_HEADER + (uint32_t)entry->name_len > length ||
            (entry->inode != 0 && entry->name_len == 0))
            return ext2_corrupt(fs, entry->inode, physical,
                                "a directory entry's name length is wrong");
        if (entry->inode > fs->superblock.s_inodes_count || (!fs->filetype && entry->file_type))
            return ext2_corrupt(fs, entry->inode, physical,
                                "a directory entry's inode or file type is out of range");
        if (entry->inode != 0 && entry->inode != EXT2_ROOT_INODE && entry->inode < fs->first_inode)
            return ext2_corrupt(fs, entry->inode, physical,
                                "a directory entry names a reserved inode");
        offset += length;
    }
    return 0;
}

static int directory_block_count(struct ext2_fs *fs, const struct ext2_inode *directory,
                                 uint64_t *count)
{
    uint64_t size = ext2_inode_size(directory);
    if (!ext2_is_directory(directory))
        return -E_NOT_DIRECTORY;
    if (size == 0 || size % fs->block_size != 0)
        return ext2_corrupt(fs, 0, directory->i_block[0],
                            "a directory's size is 0 or not a multiple of the block");
    *count = size / fs->block_size;
    return 0;
}

static bool names(const struct ext2_directory_entry *entry, const char *name, uint8_t length)
{
    return entry->name_len == length && memcmp(entry->name, name, length) == 0;
}

/* A directory's first block begins with "." naming the directory itself and
 * ".." (e2fsck's pass 2): a block that another directory's inode also
 * names, or no directory's at all, is not used as this one's. */
static int check_dot_entries(struct ext2_fs *fs, uint32_t number, uint8_t *block, uint32_t physical)
{
    const struct ext2_directory_entry *dot = entry_at(block, 0);
    if (dot->inode != number || !names(dot, ".", 1) || dot->rec_len >= fs->block_size)
        return ext2_corrupt(fs, number, physical,
                            "a directory's first entry is not '.' naming the directory");
    const struct ext2_directory_entry *dot_dot = entry_at(block, dot->rec_len);
    if (dot_dot->inode == 0 || !names(dot_dot, "..", 2))
        return ext2_corrupt(fs, number, physical, "a directory's second entry is not '..'");
    return 0;
}

/* Reads and checks block `logical` of directory `number`; a hole in a
 * directory is corruption, and so is a first block without its "." and "..". */
static int read_directory_block(struct ext2_fs *fs, uint32_t number, struct ext2_inode *directory,
                                uint64_t logical, uint8_t *block, uint32_t *physical)
{
    int status = ext2_map_block(fs, directory, logical, physical);
    if (status < 0)
        return status;
    if (*physical == 0)
        return ext2_corrupt(fs, number, 0, "a directory has a hole");
    status = ext2_read_block(fs, *physical, block);
    if (status == 0)
        status = check_directory_block(fs, block, *physical);
    if (status == 0 && logical == 0)
        status = check_dot_entries(fs, number, block, *physical);
    return status;
}

int ext2_directory_find(struct ext2_fs *fs, uint32_t number, struct ext2_inode *directory,
                        const char *name, size_t name_length, struct ext2_entry_location *location)
{
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    uint64_t count;
    int status = directory_block_count(fs, directory, &count);
    if (status < 0)
        return status;
    for (uint64_t logical = 0; logical < count; logical++) {
        uint32_t physical;
        status = read_directory_block(fs, number, directory, logical, block, &physical);
        if (status < 0)
            return status;
        uint32_t previous = UINT32_MAX;
        for (uint32_t offset = 0; offset < fs->block_size;) {
            struct ext2_directory_entry *entry = entry_at(block, offset);
            if (entry->inode != 0 && entry->name_len == name_length &&
                memcmp(entry->name, name, name_length) == 0) {
                *location = (struct ext2_entry_location){logical,  physical,     offset,
                                                         previous, entry->inode, entry->file_type};
                return 0;
            }
            previous = offset;
            offset += entry->rec_len;
        }
    }
    return -E_NOT_FOUND;
}

static void fill_entry(const struct ext2_fs *fs, struct ext2_directory_entry *entry, uint32_t inode,
                       uint16_t rec_len, const char *name, size_t name_length, uint8_t file_type)
{
    entry->inode = inode;
    entry->rec_len = rec_len;
    entry->name_len = (uint8_t)name_length;
    entry->file_type = fs->filetype ? file_type : 0;
    memcpy(entry->name, name, name_length);
}

/* Puts the entry in the block if some entry has room after its name. */
static bool place_entry(const struct ext2_fs *fs, uint8_t *block, const char *name,
                        size_t name_length, uint32_t inode, uint8_t file_type)
{
    size_t needed = entry_space(name_length);
    for (uint32_t offset = 0; offset < fs->block_size;) {
        struct ext2_directory_entry *entry = entry_at(block, offset);
        size_t used = entry->inode ? entry_space(entry->name_len) : 0;
        if (entry->rec_len >= used + needed) {
            uint16_t rest = (uint16_t)(entry->rec_len - used);
            if (used > 0) {
                entry->rec_len = (uint16_t)used;
                entry = entry_at(block, offset + (uint32_t)used);
            }
            fill_entry(fs, entry, inode, rest, name, name_length, file_type);
            return true;
        }
        offset += entry->rec_len;
    }
    return false;
}

static int append_directory_block(struct ext2_fs *fs, struct ext2_inode *directory,
                                  uint64_t logical, const char *name, size_t name_length,
                                  uint32_t inode, uint8_t file_type)
{
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    uint32_t physical, goal = 0;
    bool created;
    if (logical > 0 && ext2_map_block(fs, directory, logical - 1, &goal) == 0 && goal != 0)
        goal++;
    int status = ext2_map_block_create(fs, directory, logical, goal, &physical, &created);
    if (status < 0)
        return status;
    memset(block, 0, fs->block_size);
    fill_entry(fs, entry_at(block, 0), inode, (uint16_t)fs->block_size, name, name_length,
               file_type);
    status = ext2_write_block(fs, physical, block);
    if (status < 0)
        return status;
    ext2_set_inode_size(fs, directory, (logical + 1) * fs->block_size);
    return 0;
}

int ext2_directory_add(struct ext2_fs *fs, uint32_t number, struct ext2_inode *directory,
                       const char *name, size_t name_length, uint32_t inode, uint8_t file_type)
{
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    uint64_t count;
    int status = directory_block_count(fs, directory, &count);
    if (status < 0)
        return status;
    directory->i_flags &= ~(uint32_t)EXT2_INDEX_FL; /* the hash index would go stale */
    directory->i_mtime = directory->i_ctime = fs->time;
    for (uint64_t logical = 0; logical < count; logical++) {
        uint32_t physical;
        status = read_directory_block(fs, number, directory, logical, block, &physical);
        if (status < 0)
            return status;
        if (place_entry(fs, block, name, name_length, inode, file_type)) {
            status = ext2_write_block(fs, physical, block);
            return status < 0 ? status : ext2_write_inode(fs, number, directory);
        }
    }
    status = append_directory_block(fs, directory, count, name, name_length, inode, file_type);
    return status < 0 ? status : ext2_write_inode(fs, number, directory);
}

/* The entry before absorbs the removed one; the first entry of a block is emptied. */
int ext2_directory_remove(struct ext2_fs *fs, const struct ext2_entry_location *location)
{
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    int status = ext2_read_block(fs, location->physical, block);
    if (status == 0)
        status = check_directory_block(fs, block, location->physical);
    if (status < 0)
        return status;
    struct ext2_directory_entry *entry = entry_at(block, location->offset);
    if (location->previous == UINT32_MAX) {
        entry->inode = 0;
    } else {
        struct ext2_directory_entry *previous = entry_at(block, location->previous);
        previous->rec_len = (uint16_t)(previous->rec_len + entry->rec_len);
    }
    return ext2_write_block(fs, location->physical, block);
}

int ext2_directory_set_entry(struct ext2_fs *fs, const struct ext2_entry_location *location,
                             uint32_t inode, uint8_t file_type)
{
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    int status = ext2_read_block(fs, location->physical, block);
    if (status == 0)
        status = check_directory_block(fs, block, location->physical);
    if (status < 0)
        return status;
    struct ext2_directory_entry *entry = entry_at(block, location->offset);
    entry->inode = inode;
    entry->file_type = fs->filetype ? file_type : 0;
    return ext2_write_block(fs, location->physical, block);
}

static bool is_dot_or_dot_dot(const struct ext2_directory_entry *entry)
{
    return (entry->name_len == 1 && entry->name[0] == '.') ||
           (entry->name_len == 2 && entry->name[0] == '.' && entry->name[1] == '.');
}

/* Returns 1 if only . and .. are left, 0 if not, or a negative error. */
int ext2_directory_is_empty(struct ext2_fs *fs, uint32_t number, struct ext2_inode *directory)
{
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    uint64_t count;
    int status = directory_block_count(fs, directory, &count);
    if (status < 0)
        return status;
    for (uint64_t logical = 0; logical < count; logical++) {
        uint32_t physical;
        status = read_directory_block(fs, number, directory, logical, block, &physical);
        if (status < 0)
            return status;
        for (uint32_t offset = 0; offset < fs->block_size;) {
            struct ext2_directory_entry *entry = entry_at(block, offset);
            if (entry->inode != 0 && !is_dot_or_dot_dot(entry))
                return 0;
            offset += entry->rec_len;
        }
    }
    return 1;
}

int ext2_directory_initialize(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode,
                              uint32_t parent)
{
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    uint32_t physical;
    bool created;
    uint32_t group = (number - 1) / fs->superblock.s_inodes_per_group;
    int status =
        ext2_map_block_create(fs, inode, 0, ext2_group_first_block(fs, group), &physical, &created);
    if (status < 0)
        return status;
    memset(block, 0, fs->block_size);
    fill_entry(fs, entry_at(block, 0), number, 12, ".", 1, EXT2_FT_DIR);
    fill_entry(fs, entry_at(block, 12), parent, (uint16_t)(fs->block_size - 12), "..", 2,
               EXT2_FT_DIR);
    status = ext2_write_block(fs, physical, block);
    if (status < 0)
        return status;
    inode->i_links_count = 2;
    ext2_set_inode_size(fs, inode, fs->block_size);
    return ext2_write_inode(fs, number, inode);
}

uint8_t ext2_file_type_of(const struct ext2_fs *fs, uint16_t mode)
{
    if (!fs->filetype)
        return EXT2_FT_UNKNOWN;
    switch (mode & EXT2_S_IFMT) {
    case EXT2_S_IFREG:
        return EXT2_FT_REG_FILE;
    case EXT2_S_IFDIR:
        return EXT2_FT_DIR;
    case EXT2_S_IFCHR:
        return EXT2_FT_CHRDEV;
    case EXT2_S_IFBLK:
        return EXT2_FT_BLKDEV;
    case EXT2_S_IFIFO:
        return EXT2_FT_FIFO;
    case EXT2_S_IFSOCK:
        return EXT2_FT_SOCK;
    case EXT2_S_IFLNK:
        return EXT2_FT_SYMLINK;
    default:
        return EXT2_FT_UNKNOWN;
    }
}

int ext2_readdir(struct ext2_fs *fs, uint32_t number, uint64_t *cursor, struct ext2_dirent *out)
{
    struct ext2_inode directory;
    uint8_t block[EXT2_MAX_BLOCK_SIZE];
    uint64_t count = 0;
    int status = ext2_read_inode(fs, number, &directory);
    if (status == 0)
        status = directory_block_count(fs, &directory, &count);
    if (status < 0)
        return status;
    for (uint64_t logical = *cursor / fs->block_size; logical < count; logical++) {
        uint32_t physical;
        status = read_directory_block(fs, number, &directory, logical, block, &physical);
        if (status < 0)
            return status;
        uint64_t base = logical * fs->block_size;
        for (uint32_t offset = 0; offset < fs->block_size;) {
            struct ext2_directory_entry *entry = entry_at(block, offset);
            offset += entry->rec_len;
            if (base + offset <= *cursor || entry->inode == 0)
                continue;
            *cursor = base + offset;
            out->inode = entry->inode;
            out->file_type = entry->file_type;
            out->name_length = entry->name_len;
            memcpy(out->name, entry->name, entry->name_len);
            out->name[entry->name_len] = '\0';
            return 1;
        }
    }
    *cursor = count * fs->block_size;
    return 0;
}
