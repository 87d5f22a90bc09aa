/* build/linux/dm_writecache_setup.c: puts Linux's dm-writecache (pmem mode) in front of a
 * disk in the Linux guest, as `dmsetup create` would: DM_DEV_CREATE, DM_TABLE_LOAD with one
 * "writecache p ORIGIN CACHE 4096 ..." target over the whole disk, then resume. Prints the
 * new device's path. Usage: dm_writecache_setup ORIGIN CACHE [OPTIONAL ARGUMENTS...] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/dm-ioctl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define DEVICE_NAME "vems_writecache"

struct table_request {
    struct dm_ioctl header;
    struct dm_target_spec target;
    char parameters[512];
};

static void header_init(struct dm_ioctl *header, size_t bytes)
{
    memset(header, 0, sizeof *header);
    header->version[0] = DM_VERSION_MAJOR;
    header->version[1] = 0;
    header->version[2] = 0;
    header->data_size = (uint32_t)bytes;
    header->data_start = sizeof *header;
    snprintf(header->name, sizeof header->name, "%s", DEVICE_NAME);
}

static uint64_t disk_sectors(const char *path)
{
    int fd = open(path, O_RDONLY);
    uint64_t bytes = 0;
    if (fd < 0 || ioctl(fd, BLKGETSIZE64, &bytes) != 0) {
        perror(path);
        exit(1);
    }
    close(fd);
    return bytes / 512;
}

static void table_load(int control, int argc, char **argv)
{
    struct table_request request;
    header_init(&request.header, sizeof request);
    request.header.target_count = 1;
    memset(&request.target, 0, sizeof request.target);
    request.target.sector_start = 0;
    request.target.length = disk_sectors(argv[1]);
    snprintf(request.target.target_type, sizeof request.target.target_type, "writecache");
    int used = snprintf(request.parameters, sizeof request.parameters, "p %s %s 4096 %d", argv[1],
                        argv[2], argc - 3);
    for (int i = 3; i < argc; i++)
        used += snprintf(request.parameters + used, sizeof request.parameters - (size_t)used, " %s",
                         argv[i]);
    if (ioctl(control, DM_TABLE_LOAD, &request) != 0) {
        perror("DM_TABLE_LOAD writecache");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: dm_writecache_setup ORIGIN CACHE [OPTIONAL ARGUMENTS...]\n");
        return 2;
    }
    int control = open("/dev/mapper/control", O_RDWR);
    if (control < 0) {
        perror("/dev/mapper/control");
        return 1;
    }
    struct dm_ioctl header;
    header_init(&header, sizeof header);
    if (ioctl(control, DM_DEV_CREATE, &header) != 0) {
        perror("DM_DEV_CREATE");
        return 1;
    }
    dev_t device = (dev_t)header.dev;
    table_load(control, argc, argv);
    header_init(&header, sizeof header);
    if (ioctl(control, DM_DEV_SUSPEND, &header) != 0) { /* without DM_SUSPEND_FLAG: resume */
        perror("DM_DEV_SUSPEND (resume)");
        return 1;
    }
    char path[64];
    snprintf(path, sizeof path, "/dev/dm-%u", minor(device));
    if (access(path, F_OK) != 0 && mknod(path, S_IFBLK | 0600, device) != 0) {
        perror(path);
        return 1;
    }
    printf("%s\n", path);
    return 0;
}
