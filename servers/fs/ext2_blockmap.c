/* ext2_blockmap.c: the block tree of an inode (12 direct pointers, then
 * single, double and triple indirect blocks): mapping a file block to a disk
 * block, adding blocks, and freeing every block from a file block onwards. */
#include "ext2_internal.h"

/* The way from i_block[root] down to one data block: block[level] for
 * level 0..depth (block[depth] is the data block), index[level] the slot
 * followed in indirect block[level]. known: how many leading blocks exist. */
struct block_path {
    uint32_t root;
    uint32_t depth;
    uint32_t index[3];
    uint32_t block[4];
    uint32_t known;
};

uint64_t ext2_largest_file_blocks(const struct ext2_fs *fs)
{
    uint64_t pointers = fs->pointers_per_block;
    uint64_t total =
        EXT2_DIRECT_BLOCKS + pointers + pointers * pointers + pointers * pointers * pointers;
    uint64_t addressable = UINT32_MAX / (fs->block_size / 512); /* i_blocks is 32-bit */
    return total < addressable ? total : addressable;
}

static int split_logical(const struct ext2_fs *fs, uint64_t logical, struct block_path *path)
{
    uint64_t pointers = fs->pointers_per_block;
    memset(path, 0, sizeof *path);
    if (logical >= ext2_max_file_blocks(fs))
        return -E_TOO_BIG;
    if (logical < EXT2_DIRECT_BLOCKS) {
        path->root = (uint32_t)logical;
        return 0;
    }
    logical -= EXT2_DIRECT_BLOCKS;
    uint64_t span = pointers;
    for (uint32_t depth = 1; depth <= 3; depth++, span *= pointers) {
        if (logical < span) {
            path->root = EXT2_SINGLE_INDIRECT + depth - 1;
            path->depth = depth;
            for (uint32_t level = depth; level-- > 0;) {
                path->index[level] = (uint32_t)(logical % pointers);
                logical /= pointers;
            }
            return 0;
        }
        logical -= span;
    }
    return -E_TOO_BIG;
}

/* A block number taken from the tree: in range, not metadata and not
 * already on the path (reported when it is not). */
static bool pointer_is_valid(struct ext2_fs *fs, uint32_t block, const uint32_t *ancestors,
                             uint32_t ancestor_count)
{
    if (!ext2_block_in_range(fs, block)) {
        ext2_corrupt(fs, 0, block, "a block pointer lies outside the disk");
        return false;
    }
    if (ext2_is_metadata(fs, block)) {
        ext2_corrupt(fs, 0, block, "a block pointer names a metadata block");
        return false;
    }
    if (ext2_is_bad_block(fs, block)) {
        ext2_corrupt(fs, 0, block, "a block pointer names a block on the bad-block list");
        return false;
    }
    for (uint32_t i = 0; i < ancestor_count; i++) {
        if (ancestors[i] == block) {
            ext2_corrupt(fs, 0, block, "an indirect block points at itself or an ancestor");
            return false;
        }
    }
    return true;
}

static uint32_t read_pointer(const uint8_t *block, uint32_t index)
{
    uint32_t value;
    memcpy(&value, block + index * 4, 4);
    return value;
}

/* Entry `index` of indirect block `block`, without copying the whole block. */
static int read_one_pointer(struct ext2_fs *fs, uint32_t block, uint32_t index, uint32_t *value)
{
    return ext2_read_bytes(fs, block, index * 4, value, sizeof *value);
}

static void write_pointer(uint8_t *block, uint32_t index, uint32_t value)
{
    memcpy(block + index * 4, &value, 4);
}

static int walk_path(struct ext2_fs *fs, const struct ext2_inode *inode, uint64_t logical,
                     struct block_path *path)
{
    int status = split_logical(fs, logical, path);
    if (status < 0)
        return status;
    path->block[0] = inode->i_block[path->root];
    for (uint32_t level = 0; level <= path->depth; level++) {
        if (path->block[level] == 0)
            return 0;
        if (!pointer_is_valid(fs, path->block[level], path->block, level))
            return -E_CORRUPT;
        path->known = level + 1;
        if (level == path->depth)
            return 0;
        status =
            read_one_pointer(fs, path->block[level], path->index[level], &path->block[level + 1]);
        if (status < 0)
            return status;
    }
    return 0;
}

int ext2_map_block(struct ext2_fs *fs, struct ext2_inode *inode, uint64_t logical,
                   uint32_t *physical)
{
    struct block_path path;
    int status = walk_path(fs, inode, logical, &path);
    if (status < 0)
        return status;
    *physical = path.known == path.depth + 1 ? path.block[path.depth] : 0;
    return 0;
}

static int allocate_blocks(struct ext2_fs *fs, uint32_t goal, uint32_t count, uint32_t *blocks)
{
    for (uint32_t i = 0; i < count; i++) {
        int status = ext2_allocate_block(fs, goal, &blocks[i]);
        if (status < 0) {
            while (i-- > 0)
                ext2_free_block(fs, blocks[i]);
            return status;
        }
        goal = blocks[i] + 1;
    }
    return 0;
}

/* New indirect blocks are written (zeroed, with their one pointer) before the
 * existing parent points at them. */
static int link_new_blocks(struct ext2_fs *fs, struct ext2_inode *inode, struct block_path *path)
{
    uint8_t buffer[EXT2_MAX_BLOCK_SIZE];
    for (uint32_t level = path->depth; level-- > path->known;) {
        memset(buffer, 0, fs->block_size);
        write_pointer(buffer, path->index[level], path->block[level + 1]);
        int status = ext2_write_block(fs, path->block[level], buffer);
        if (status < 0)
            return status;
    }
    if (path->known == 0) {
        inode->i_block[path->root] = path->block[0];
        return 0;
    }
    uint32_t parent = path->block[path->known - 1];
    int status = ext2_read_block(fs, parent, buffer);
    if (status < 0)
        return status;
    write_pointer(buffer, path->index[path->known - 1], path->block[path->known]);
    return ext2_write_block(fs, parent, buffer);
}

int ext2_map_block_create(struct ext2_fs *fs, struct ext2_inode *inode, uint64_t logical,
                          uint32_t goal, uint32_t *physical, bool *created)
{
    struct block_path path;
    int status = walk_path(fs, inode, logical, &path);
    if (status < 0)
        return status;
    *created = false;
    if (path.known == path.depth + 1) {
        *physical = path.block[path.depth];
        return 0;
    }
    uint32_t missing = path.depth + 1 - path.known;
    status = ext2_quota_allows(fs, inode, missing);
    if (status == 0)
        status = allocate_blocks(fs, goal, missing, &path.block[path.known]);
    if (status < 0)
        return status;
    status = link_new_blocks(fs, inode, &path);
    if (status < 0)
        return status;
    inode->i_blocks += missing * (fs->block_size / 512);
    ext2_quota_charge(fs, inode, missing * (fs->block_size / 512));
    *physical = path.block[path.depth];
    *created = true;
    return 0;
}

/* Freeing: a check pass over the part to free (ranges, loops), then the freeing pass. */
struct free_walk {
    struct ext2_inode *inode;
    uint64_t first; /* first logical block to free */
    bool apply;
    uint32_t ancestors[4];
};

static uint64_t blocks_under(const struct ext2_fs *fs, uint32_t level)
{
    uint64_t span = 1;
    while (level-- > 0)
        span *= fs->pointers_per_block;
    return span;
}

static int release_block(struct ext2_fs *fs, struct free_walk *walk, uint32_t *pointer)
{
    int status = ext2_free_block(fs, *pointer);
    if (status < 0)
        return status;
    *pointer = 0;
    uint32_t sectors = fs->block_size / 512;
    if (sectors > walk->inode->i_blocks)
        sectors = walk->inode->i_blocks;
    walk->inode->i_blocks -= sectors;
    ext2_quota_charge(fs, walk->inode, -(int64_t)sectors);
    return 0;
}

static int free_subtree(struct ext2_fs *fs, struct free_walk *walk, uint32_t *pointer,
                        uint32_t level, uint64_t base, uint32_t depth_so_far);

static int free_children(struct ext2_fs *fs, struct free_walk *walk, uint32_t block, uint32_t level,
                         uint64_t base, uint32_t depth_so_far)
{
    uint8_t buffer[EXT2_MAX_BLOCK_SIZE];
    int status = ext2_read_block(fs, block, buffer);
    if (status < 0)
        return status;
    uint64_t child_span = blocks_under(fs, level - 1);
    bool changed = false;
    for (uint32_t i = 0; i < fs->pointers_per_block; i++) {
        uint64_t child_base = base + i * child_span;
        uint32_t child = read_pointer(buffer, i);
        if (child == 0 || child_base + child_span <= walk->first)
            continue;
        status = free_subtree(fs, walk, &child, level - 1, child_base, depth_so_far + 1);
        if (status < 0)
            return status;
        if (walk->apply) {
            write_pointer(buffer, i, child);
            changed = true;
        }
    }
    if (changed && base < walk->first)
        return ext2_write_block(fs, block, buffer);
    return 0;
}

static int free_subtree(struct ext2_fs *fs, struct free_walk *walk, uint32_t *pointer,
                        uint32_t level, uint64_t base, uint32_t depth_so_far)
{
    if (*pointer == 0 || base + blocks_under(fs, level) <= walk->first)
        return 0;
    if (!pointer_is_valid(fs, *pointer, walk->ancestors, depth_so_far))
        return -E_CORRUPT;
    if (level > 0) {
        walk->ancestors[depth_so_far] = *pointer;
        int status = free_children(fs, walk, *pointer, level, base, depth_so_far);
        if (status < 0)
            return status;
    }
    if (walk->apply && base >= walk->first)
        return release_block(fs, walk, pointer);
    return 0;
}

static int free_tree_pass(struct ext2_fs *fs, struct free_walk *walk)
{
    uint64_t base = 0;
    for (uint32_t root = 0; root < EXT2_BLOCK_POINTERS; root++) {
        uint32_t level = root < EXT2_DIRECT_BLOCKS ? 0 : root - EXT2_DIRECT_BLOCKS + 1;
        int status = free_subtree(fs, walk, &walk->inode->i_block[root], level, base, 0);
        if (status < 0)
            return status;
        base += blocks_under(fs, level);
    }
    return 0;
}

/* Visiting every block of a tree below a logical limit, indirect blocks too. */
struct tree_visit {
    uint64_t limit;
    int (*visit)(void *context, uint32_t block, bool indirect, uint64_t logical);
    void *context;
    bool bad_block_list; /* inode 1's tree: its leaves may be anywhere on the disk */
    uint32_t ancestors[4];
};

static bool visited_block_is_valid(struct ext2_fs *fs, struct tree_visit *walk, uint32_t block,
                                   uint32_t level, uint32_t depth)
{
    if (level > 0 || !walk->bad_block_list)
        return pointer_is_valid(fs, block, walk->ancestors, depth);
    if (ext2_block_in_range(fs, block))
        return true;
    ext2_corrupt(fs, EXT2_BAD_BLOCKS_INODE, block,
                 "a block on the bad-block list lies outside the disk");
    return false;
}

static int visit_subtree(struct ext2_fs *fs, struct tree_visit *walk, uint32_t block,
                         uint32_t level, uint64_t base, uint32_t depth)
{
    if (block == 0 || base >= walk->limit)
        return 0;
    if (!visited_block_is_valid(fs, walk, block, level, depth))
        return -E_CORRUPT;
    int status = walk->visit(walk->context, block, level > 0, base);
    if (status < 0 || level == 0)
        return status;
    uint8_t buffer[EXT2_MAX_BLOCK_SIZE];
    status = ext2_read_block(fs, block, buffer);
    if (status < 0)
        return status;
    walk->ancestors[depth] = block;
    uint64_t child_span = blocks_under(fs, level - 1);
    for (uint32_t i = 0; i < fs->pointers_per_block && status == 0; i++)
        status = visit_subtree(fs, walk, read_pointer(buffer, i), level - 1, base + i * child_span,
                               depth + 1);
    return status;
}

static int visit_whole_tree(struct ext2_fs *fs, const struct ext2_inode *inode,
                            struct tree_visit *walk)
{
    uint64_t base = 0;
    for (uint32_t root = 0; root < EXT2_BLOCK_POINTERS; root++) {
        uint32_t level = root < EXT2_DIRECT_BLOCKS ? 0 : root - EXT2_DIRECT_BLOCKS + 1;
        int status = visit_subtree(fs, walk, inode->i_block[root], level, base, 0);
        if (status < 0)
            return status;
        base += blocks_under(fs, level);
    }
    return 0;
}

int ext2_visit_tree(struct ext2_fs *fs, const struct ext2_inode *inode, uint64_t limit,
                    int (*visit)(void *context, uint32_t block, bool indirect, uint64_t logical),
                    void *context)
{
    struct tree_visit walk = {.limit = limit, .visit = visit, .context = context};
    return visit_whole_tree(fs, inode, &walk);
}

int ext2_visit_bad_block_list(struct ext2_fs *fs, const struct ext2_inode *inode,
                              int (*visit)(void *context, uint32_t block, bool indirect,
                                           uint64_t logical),
                              void *context)
{
    struct tree_visit walk = {
        .limit = UINT64_MAX, .visit = visit, .context = context, .bad_block_list = true};
    return visit_whole_tree(fs, inode, &walk);
}

int ext2_check_block_tree(struct ext2_fs *fs, struct ext2_inode *inode)
{
    struct free_walk walk = {.inode = inode, .first = 0, .apply = false};
    return ext2_has_block_tree(inode) ? free_tree_pass(fs, &walk) : 0;
}

int ext2_free_blocks_from(struct ext2_fs *fs, struct ext2_inode *inode, uint64_t first_logical)
{
    struct free_walk walk = {.inode = inode, .first = first_logical, .apply = false};
    int status = free_tree_pass(fs, &walk);
    if (status < 0)
        return status;
    walk.apply = true;
    return free_tree_pass(fs, &walk);
}
