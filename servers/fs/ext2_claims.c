/* ext2_claims.c: which blocks the files claim, as e2fsck's pass 1 finds
 * them: read once after mount from every inode the inode bitmaps mark in
 * use (their block trees), kept in a bitmap the caller provides, with the
 * blocks two inodes claim (cross-linked files). The library then refuses to
 * free a block another file also claims (the next allocation would give it
 * to a third file) and to hand out a block the bitmap marks free that a file
 * claims. A scan cut short (the caller's bitmap too small, the read budget
 * spent) knows fewer claims: it misses some damage, never invents any. */
#include "ext2_internal.h"

#define SCAN_READ_BUDGET 65536u /* inode-table and indirect blocks read by one scan */

struct claim_walk {
    struct ext2_fs *fs;
    bool apply;       /* false: only check that every pointer is sane */
    uint32_t reads;   /* blocks read so far by the scan */
    uint32_t path[4]; /* the indirect blocks above, against loops */
};

static bool bit(const uint8_t *bits, uint64_t number)
{
    return (bits[number / 8] >> (number % 8)) & 1;
}

static bool tracked(const struct ext2_claims *claims, uint32_t block)
{
    return claims->bits != NULL && block < claims->blocks;
}

bool ext2_claimed_twice(const struct ext2_fs *fs, uint32_t block)
{
    const struct ext2_claims *claims = &fs->claims;
    for (uint32_t i = 0; i < claims->twice_ranges; i++)
        if (block >= claims->twice[i].first &&
            block - claims->twice[i].first < claims->twice[i].count)
            return true;
    return false;
}

bool ext2_claimed(const struct ext2_fs *fs, uint32_t block)
{
    return tracked(&fs->claims, block) && bit(fs->claims.bits, block);
}

void ext2_claims_set(struct ext2_fs *fs, uint32_t block, bool claimed)
{
    struct ext2_claims *claims = &fs->claims;
    if (!tracked(claims, block))
        return;
    if (claimed)
        claims->bits[block / 8] |= (uint8_t)(1u << (block % 8));
    else
        claims->bits[block / 8] &= (uint8_t) ~(1u << (block % 8));
}

static void note_twice(struct ext2_claims *claims, uint32_t block)
{
    uint32_t count = claims->twice_ranges;
    struct ext2_block_range *last = count > 0 ? &claims->twice[count - 1] : NULL;
    if (last != NULL && last->first + last->count == block) {
        last->count++;
    } else if (count < EXT2_TWICE_CLAIMED_RANGES) {
        claims->twice[claims->twice_ranges++] = (struct ext2_block_range){block, 1};
    } else {
        claims->twice_overflow = true;
    }
    claims->twice_blocks++;
}

static void claim(struct ext2_fs *fs, uint32_t block)
{
    struct ext2_claims *claims = &fs->claims;
    if (!tracked(claims, block))
        return;
    if (bit(claims->bits, block)) {
        if (!ext2_claimed_twice(fs, block))
            note_twice(claims, block);
        return;
    }
    ext2_claims_set(fs, block, true);
    claims->claimed++;
}

/* A pointer of the tree: on the disk, not metadata nor a bad block, not a
 * block above it. Nothing is reported: using the file reports it. */
static bool sane(const struct claim_walk *walk, uint32_t block, uint32_t depth)
{
    const struct ext2_fs *fs = walk->fs;
    if (!ext2_block_in_range(fs, block) || ext2_is_metadata(fs, block) ||
        ext2_is_bad_block(fs, block))
        return false;
    for (uint32_t i = 0; i < depth; i++)
        if (walk->path[i] == block)
            return false;
    return true;
}

/* The subtree under `block` (level 0: a data block); -E_CORRUPT when a
 * pointer is not sane, -E_TOO_BIG when the read budget is spent. */
static int walk_subtree(struct claim_walk *walk, uint32_t block, uint32_t level, uint32_t depth)
{
    struct ext2_fs *fs = walk->fs;
    if (block == 0)
        return 0;
    if (!sane(walk, block, depth))
        return -E_CORRUPT;
    if (walk->apply)
        claim(fs, block);
    if (level == 0)
        return 0;
    if (++walk->reads > SCAN_READ_BUDGET)
        return -E_TOO_BIG;
    uint8_t buffer[EXT2_MAX_BLOCK_SIZE];
    int status = ext2_read_block(fs, block, buffer);
    walk->path[depth] = block;
    for (uint32_t i = 0; i < fs->pointers_per_block && status == 0; i++) {
        uint32_t child;
        memcpy(&child, buffer + i * 4, sizeof child);
        status = walk_subtree(walk, child, level - 1, depth + 1);
    }
    return status;
}

static int walk_inode(struct claim_walk *walk, const struct ext2_inode *inode)
{
    for (uint32_t root = 0; root < EXT2_BLOCK_POINTERS; root++) {
        uint32_t level = root < EXT2_DIRECT_BLOCKS ? 0 : root - EXT2_DIRECT_BLOCKS + 1;
        int status = walk_subtree(walk, inode->i_block[root], level, 0);
        if (status < 0)
            return status;
    }
    return 0;
}

/* A live inode's tree is claimed only when every pointer in it is sane: a
 * damaged tree's junk claims nothing (the file is refused when used). */
static int claim_inode(struct claim_walk *walk, uint32_t number)
{
    struct ext2_inode inode;
    if (ext2_inode_in_bad_block(walk->fs, number))
        return 0;
    int status = ext2_read_raw_inode(walk->fs, number, &inode);
    if (status < 0 || inode.i_mode == 0 || (inode.i_links_count == 0 && inode.i_dtime != 0) ||
        !ext2_has_block_tree(&inode))
        return status;
    walk->apply = false;
    status = walk_inode(walk, &inode);
    if (status == -E_CORRUPT)
        return 0;
    if (status < 0)
        return status;
    walk->apply = true;
    return walk_inode(walk, &inode);
}

/* Root and the inodes from s_first_ino the group's bitmap marks in use
 * (the other reserved inodes' blocks are metadata: the journal's, the
 * resize inode's, the bad-block list). */
static int claim_group(struct claim_walk *walk, uint32_t group)
{
    struct ext2_fs *fs = walk->fs;
    struct ext2_group_descriptor descriptor;
    uint8_t bitmap[EXT2_MAX_BLOCK_SIZE];
    int status = ext2_read_group_bitmap(fs, group, EXT2_INODE_BITMAP, &descriptor, bitmap);
    if (status < 0)
        return status;
    uint32_t per_group = fs->superblock.s_inodes_per_group;
    for (uint32_t index = 0; index < per_group && status == 0; index++) {
        uint32_t number = group * per_group + index + 1;
        if (!bit(bitmap, index) || (number != EXT2_ROOT_INODE && number < fs->first_inode))
            continue;
        if (index % fs->inodes_per_block == 0 && ++walk->reads > SCAN_READ_BUDGET)
            return -E_TOO_BIG;
        status = claim_inode(walk, number);
    }
    return status;
}

int ext2_claims_scan(struct ext2_fs *fs, uint8_t *bits, uint64_t bytes)
{
    struct ext2_claims *claims = &fs->claims;
    *claims = (struct ext2_claims){.bits = bits, .blocks = bytes * 8};
    if (claims->blocks > fs->superblock.s_blocks_count)
        claims->blocks = fs->superblock.s_blocks_count;
    claims->partial = claims->blocks < fs->superblock.s_blocks_count;
    memset(bits, 0, (size_t)((claims->blocks + 7) / 8));
    struct claim_walk walk = {.fs = fs};
    int status = 0;
    for (uint32_t group = 0; group < fs->group_count && status == 0; group++)
        status = claim_group(&walk, group);
    if (status == -E_TOO_BIG) {
        claims->partial = true; /* what was claimed so far is true: it stays */
        status = 0;
    }
    if (status < 0) {
        *claims = (struct ext2_claims){0};
        return status;
    }
    if (claims->twice_overflow) {
        fs->read_only = true; /* a free of a cross-linked block could go unseen */
        fs->read_only_reason = "more blocks are claimed by two files than FS keeps";
    }
    return 0;
}
