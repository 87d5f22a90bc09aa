/* ext2_namespace.c: paths and the name space: lookup (".", "..", length
 * limits), create, mkdir, unlink, rmdir and rename, keeping link counts and
 * the groups' directory counts right. Each is one operation (ext2_operation.c):
 * when it fails, for lack of space or on an inconsistency, it changes nothing
 * on disk. */
#include "ext2_internal.h"

#define EXT2_LINK_MAX 32000

/* The name at *cursor (slashes before it skipped), its length, and whether it is the last. */
static size_t next_component(const char **cursor, const char **name, bool *last)
{
    const char *text = *cursor;
    while (*text == '/')
        text++;
    *name = text;
    while (*text != '\0' && *text != '/')
        text++;
    size_t length = (size_t)(text - *name);
    while (*text == '/')
        text++;
    *cursor = text;
    *last = *text == '\0';
    return length;
}

static bool is_dot_name(const char *name, size_t length)
{
    return (length == 1 && name[0] == '.') || (length == 2 && name[0] == '.' && name[1] == '.');
}

/* One path step from the directory *current; `searching` checks that the
 * user may search it (a walk does; following ".." inside the library not). */
static int step_into(struct ext2_fs *fs, uint32_t *current, const char *name, size_t length,
                     bool searching)
{
    struct ext2_inode directory;
    struct ext2_entry_location location;
    int status = ext2_read_inode(fs, *current, &directory);
    if (status < 0)
        return status;
    if (!ext2_is_directory(&directory))
        return -E_NOT_DIRECTORY;
    if (searching && (status = ext2_permit(fs, &directory, EXT2_MAY_EXECUTE)) < 0)
        return status;
    if (length == 1 && name[0] == '.')
        return 0;
    status = ext2_directory_find(fs, *current, &directory, name, length, &location);
    if (status < 0)
        return status;
    struct ext2_inode target;
    status = ext2_read_named_inode(fs, location.inode, &target);
    if (status < 0)
        return status;
    *current = location.inode;
    return 0;
}

/* Walks the path; with keep_last, stops before the last component and returns it. */
static int walk(struct ext2_fs *fs, const char *path, bool keep_last, uint32_t *inode,
                const char **last_name, size_t *last_length)
{
    if (path == NULL)
        return -E_INVALID;
    if (strnlen(path, EXT2_PATH_MAX + 1) > EXT2_PATH_MAX)
        return -E_TOO_BIG;
    uint32_t current = EXT2_ROOT_INODE;
    const char *cursor = path;
    for (;;) {
        const char *name;
        bool last;
        size_t length = next_component(&cursor, &name, &last);
        if (length == 0)
            break;
        if (length > EXT2_NAME_MAX)
            return -E_NAME_TOO_LONG;
        if (keep_last && last) {
            *inode = current;
            *last_name = name;
            *last_length = length;
            return 0;
        }
        int status = step_into(fs, &current, name, length, true);
        if (status < 0)
            return status;
    }
    if (keep_last)
        return -E_INVALID; /* the root has no parent entry to change */
    *inode = current;
    return 0;
}

int ext2_lookup(struct ext2_fs *fs, const char *path, uint32_t *inode)
{
    return walk(fs, path, false, inode, NULL, NULL);
}

/* The parent directory of the path's last component, read, and that name. */
struct parent {
    uint32_t number;
    struct ext2_inode inode;
    const char *name;
    size_t length;
};

static int find_parent(struct ext2_fs *fs, const char *path, struct parent *parent)
{
    int status = ext2_check_writable(fs);
    if (status == 0)
        status = walk(fs, path, true, &parent->number, &parent->name, &parent->length);
    if (status == 0)
        status = ext2_read_inode(fs, parent->number, &parent->inode);
    if (status < 0)
        return status;
    if (!ext2_is_directory(&parent->inode))
        return -E_NOT_DIRECTORY;
    if ((status = ext2_permit(fs, &parent->inode, EXT2_MAY_EXECUTE)) < 0)
        return status; /* the last step is searched too */
    return is_dot_name(parent->name, parent->length) ? -E_INVALID : 0;
}

/* The end of an operation begun by ext2_operation_begin: the superblock's
 * counts written, then all of it, or nothing when it failed. */
static int finish(struct ext2_fs *fs, int status)
{
    int flushed = ext2_flush_superblock(fs);
    return (int)ext2_operation_end(fs, status < 0 ? status : flushed);
}

static int make_node(struct ext2_fs *fs, struct parent *parent, uint16_t mode, uint32_t *result)
{
    struct ext2_entry_location location;
    struct ext2_inode inode;
    uint32_t number;
    bool directory = (mode & EXT2_S_IFMT) == EXT2_S_IFDIR;
    int status = ext2_directory_find(fs, parent->number, &parent->inode, parent->name,
                                     parent->length, &location);
    if (status == 0)
        return -E_EXISTS;
    if (status != -E_NOT_FOUND)
        return status;
    if ((status = ext2_permit(fs, &parent->inode, EXT2_MAY_WRITE | EXT2_MAY_EXECUTE)) < 0)
        return status;
    if (directory && parent->inode.i_links_count >= EXT2_LINK_MAX)
        return -E_TOO_BIG;
    status = ext2_allocate_inode(fs, parent->number, directory, &number);
    if (status < 0)
        return status;
    status = ext2_initialize_inode(fs, number, &inode, mode);
    if (status == 0 && directory)
        status = ext2_directory_initialize(fs, number, &inode, parent->number);
    if (status == 0 && !directory) {
        inode.i_links_count = 1;
        status = ext2_write_inode(fs, number, &inode);
    }
    if (status == 0)
        status = ext2_directory_add(fs, parent->number, &parent->inode, parent->name,
                                    parent->length, number, ext2_file_type_of(fs, mode));
    if (status < 0) {
        ext2_release_inode(fs, number, &inode);
        return status;
    }
    if (directory) {
        parent->inode.i_links_count++;
        status = ext2_write_inode(fs, parent->number, &parent->inode);
    }
    if (result)
        *result = number;
    return status;
}

int ext2_create(struct ext2_fs *fs, const char *path, uint16_t mode, uint32_t *inode)
{
    struct parent parent;
    ext2_operation_begin(fs);
    int status = find_parent(fs, path, &parent);
    if (status == -E_INVALID)
        status = -E_EXISTS;
    if (status == 0)
        status = make_node(fs, &parent, (uint16_t)(EXT2_S_IFREG | (mode & 07777)), inode);
    return finish(fs, status);
}

int ext2_mkdir(struct ext2_fs *fs, const char *path, uint16_t mode, uint32_t *inode)
{
    struct parent parent;
    ext2_operation_begin(fs);
    int status = find_parent(fs, path, &parent);
    if (status == -E_INVALID)
        status = -E_EXISTS;
    if (status == 0)
        status = make_node(fs, &parent, (uint16_t)(EXT2_S_IFDIR | (mode & 07777)), inode);
    return finish(fs, status);
}

/* Before an entry goes: the inode's blocks must be freeable if it is the last link. */
static int check_removable(struct ext2_fs *fs, struct ext2_inode *inode)
{
    if (inode->i_links_count > 1 && !ext2_is_directory(inode))
        return 0;
    return ext2_check_block_tree(fs, inode);
}

/* Whether the caller keeps the inode whose last name just went (it is open). */
static bool kept_open(struct ext2_fs *fs, uint32_t number, const struct ext2_inode *inode)
{
    if (fs->last_name_gone == NULL)
        return false;
    bool directory = ext2_is_directory(inode);
    return fs->last_name_gone(fs->last_name_context, number, directory) && !directory;
}

/* One link fewer; at none the inode and its blocks are freed (unless kept open). */
static int drop_link(struct ext2_fs *fs, uint32_t number, struct ext2_inode *inode)
{
    if (inode->i_links_count > 0)
        inode->i_links_count--;
    bool last = ext2_is_directory(inode) || inode->i_links_count == 0;
    if (last && !kept_open(fs, number, inode))
        return ext2_release_inode(fs, number, inode);
    inode->i_ctime = fs->time;
    return ext2_write_inode(fs, number, inode);
}

static int remove_name(struct ext2_fs *fs, const char *path, bool directory)
{
    struct parent parent;
    struct ext2_entry_location location;
    struct ext2_inode target;
    int status = find_parent(fs, path, &parent);
    if (status == 0)
        status = ext2_directory_find(fs, parent.number, &parent.inode, parent.name, parent.length,
                                     &location);
    if (status == 0)
        status = ext2_read_named_inode(fs, location.inode, &target);
    if (status == 0)
        status = ext2_permit_removal(fs, &parent.inode, &target);
    if (status < 0)
        return status;
    if (ext2_is_directory(&target) != directory)
        return directory ? -E_NOT_DIRECTORY : -E_IS_DIRECTORY;
    if (directory && (status = ext2_directory_is_empty(fs, location.inode, &target)) <= 0)
        return status < 0 ? status : -E_NOT_EMPTY;
    status = check_removable(fs, &target);
    if (status == 0)
        status = ext2_directory_remove(fs, &location);
    if (status == 0)
        status = drop_link(fs, location.inode, &target);
    if (status == 0 && directory) {
        parent.inode.i_links_count--;
        parent.inode.i_mtime = parent.inode.i_ctime = fs->time;
        status = ext2_write_inode(fs, parent.number, &parent.inode);
    }
    return status;
}

int ext2_unlink(struct ext2_fs *fs, const char *path)
{
    ext2_operation_begin(fs);
    return finish(fs, remove_name(fs, path, false));
}

int ext2_rmdir(struct ext2_fs *fs, const char *path)
{
    ext2_operation_begin(fs);
    return finish(fs, remove_name(fs, path, true));
}

/* Whether `directory` is `ancestor` or lies below it (following ..). */
static int is_within(struct ext2_fs *fs, uint32_t directory, uint32_t ancestor)
{
    for (uint32_t steps = 0; steps < fs->superblock.s_inodes_count; steps++) {
        if (directory == ancestor)
            return 1;
        if (directory == EXT2_ROOT_INODE)
            return 0;
        int status = step_into(fs, &directory, "..", 2, false);
        if (status < 0)
            return status;
    }
    return -E_CORRUPT;
}

static int adjust_links(struct ext2_fs *fs, uint32_t number, int change)
{
    struct ext2_inode inode;
    int status = ext2_read_inode(fs, number, &inode);
    if (status < 0)
        return status;
    inode.i_links_count = (uint16_t)(inode.i_links_count + change);
    inode.i_ctime = inode.i_mtime = fs->time;
    return ext2_write_inode(fs, number, &inode);
}

/* Replaces an existing target entry (after the type checks) and drops the old target. */
static int replace_target(struct ext2_fs *fs, struct parent *to,
                          const struct ext2_entry_location *target, uint32_t source,
                          const struct ext2_inode *source_inode)
{
    struct ext2_inode old;
    int status = ext2_read_named_inode(fs, target->inode, &old);
    if (status < 0)
        return status;
    if (ext2_is_directory(source_inode) && !ext2_is_directory(&old))
        return -E_NOT_DIRECTORY;
    if (!ext2_is_directory(source_inode) && ext2_is_directory(&old))
        return -E_IS_DIRECTORY;
    if (ext2_is_directory(&old) && (status = ext2_directory_is_empty(fs, target->inode, &old)) <= 0)
        return status < 0 ? status : -E_NOT_EMPTY;
    if ((status = ext2_permit_removal(fs, &to->inode, &old)) < 0)
        return status;
    status = check_removable(fs, &old);
    if (status == 0)
        status = ext2_directory_set_entry(fs, target, source,
                                          ext2_file_type_of(fs, source_inode->i_mode));
    if (status == 0)
        status = drop_link(fs, target->inode, &old);
    if (status == 0 && ext2_is_directory(&old))
        status = adjust_links(fs, to->number, -1);
    return status;
}

static int unlink_source(struct ext2_fs *fs, struct parent *from, uint32_t source)
{
    struct ext2_entry_location location;
    int status = ext2_read_inode(fs, from->number, &from->inode);
    if (status == 0)
        status = ext2_directory_find(fs, from->number, &from->inode, from->name, from->length,
                                     &location);
    if (status < 0)
        return status;
    if (location.inode != source)
        return -E_CORRUPT;
    return ext2_directory_remove(fs, &location);
}

static int reparent_directory(struct ext2_fs *fs, uint32_t source, uint32_t from, uint32_t to)
{
    struct ext2_inode inode;
    struct ext2_entry_location dot_dot;
    int status = ext2_read_inode(fs, source, &inode);
    if (status == 0)
        status = ext2_directory_find(fs, source, &inode, "..", 2, &dot_dot);
    if (status == 0)
        status = ext2_directory_set_entry(fs, &dot_dot, to, EXT2_FT_DIR);
    if (status == 0)
        status = adjust_links(fs, from, -1);
    if (status == 0)
        status = adjust_links(fs, to, +1);
    return status;
}

static int move(struct ext2_fs *fs, struct parent *from, struct parent *to)
{
    struct ext2_entry_location source_location, target;
    struct ext2_inode source_inode;
    int status = ext2_directory_find(fs, from->number, &from->inode, from->name, from->length,
                                     &source_location);
    if (status == 0)
        status = ext2_read_named_inode(fs, source_location.inode, &source_inode);
    if (status == 0)
        status = ext2_permit_removal(fs, &from->inode, &source_inode);
    if (status == 0)
        status = ext2_permit(fs, &to->inode, EXT2_MAY_WRITE | EXT2_MAY_EXECUTE);
    if (status < 0)
        return status;
    uint32_t source = source_location.inode;
    bool directory = ext2_is_directory(&source_inode);
    if (directory && from->number != to->number &&
        (status = ext2_permit(fs, &source_inode, EXT2_MAY_WRITE)) < 0)
        return status; /* its ".." changes */
    if (directory && from->number != to->number) {
        status = is_within(fs, to->number, source);
        if (status != 0)
            return status < 0 ? status : -E_INVALID;
        if (to->inode.i_links_count >= EXT2_LINK_MAX)
            return -E_TOO_BIG;
    }
    status = ext2_directory_find(fs, to->number, &to->inode, to->name, to->length, &target);
    if (status == 0 && target.inode == source)
        return 0;
    if (status == 0)
        status = replace_target(fs, to, &target, source, &source_inode);
    else if (status == -E_NOT_FOUND)
        status = ext2_directory_add(fs, to->number, &to->inode, to->name, to->length, source,
                                    ext2_file_type_of(fs, source_inode.i_mode));
    if (status == 0)
        status = unlink_source(fs, from, source);
    if (status == 0 && directory && from->number != to->number)
        status = reparent_directory(fs, source, from->number, to->number);
    return status;
}

int ext2_rename(struct ext2_fs *fs, const char *old_path, const char *new_path)
{
    struct parent from, to;
    ext2_operation_begin(fs);
    int status = find_parent(fs, old_path, &from);
    if (status == 0)
        status = find_parent(fs, new_path, &to);
    if (status == 0)
        status = move(fs, &from, &to);
    return finish(fs, status);
}
