/* ext2_in_place.c: the ext2 side of FS's in-place small writes
 * (ext2_in_place.h): the deferred stamp of the inode's times. */
#include "ext2_in_place.h"
#include "ext2_internal.h"
#include <formica/errors.h>

int ext2_in_place_touch(struct ext2_fs *fs, uint32_t inode)
{
    struct ext2_inode record;
    int error = ext2_check_writable(fs);
    if (error == 0)
        error = ext2_read_inode(fs, inode, &record);
    if (error != 0)
        return error;
    record.i_mtime = record.i_ctime = fs->time;
    return ext2_write_inode(fs, inode, &record);
}
