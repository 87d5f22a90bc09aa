/* servers/disk/main.c: DK, the disk driver server (program "dk", spawned
 * with SPAWN_DRIVER). Finds a virtio-blk disk, else NVMe, else AHCI; `dk
 * --selftest [SECTORS]` checks the driver; kernel option dk=idle leaves the disk alone. */
#include "disk_drivers.h"
#include "selftest.h"
#include "service.h"
#include <formica/protocol/dk.h>
#include <formica/server_placeholder.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_SELFTEST_SECTORS 2048

static bool find_disk(struct block_device *device)
{
    if (virtio_blk_probe(device))
        return true;
    if (nvme_probe(device))
        return true;
    return ahci_probe(device);
}

static void announce(const struct block_device *device)
{
    if (strcmp(device->driver, "ahci") == 0)
        printf("dk: AHCI port %u disk of %lu sectors\n", device->port, device->sectors);
    else if (strcmp(device->driver, "nvme") == 0)
        printf("dk: NVMe namespace %u disk of %lu sectors\n", device->port, device->sectors);
    else
        printf("dk: %s disk of %lu sectors\n", device->driver, device->sectors);
}

/* dk=idle on the kernel command line: the boot DK leaves the disk to a
 * `run --driver dk --selftest` (two drivers must never share a device). */
static bool told_to_stay_idle(void)
{
    char value[16];
    return kernel_option("dk", value, sizeof(value)) >= 0 && strcmp(value, "idle") == 0;
}

int main(int argc, char **argv)
{
    bool selftest = argc >= 2 && strcmp(argv[1], "--selftest") == 0;
    if (!selftest && told_to_stay_idle())
        run_server_placeholder(SERVER_NAME_DK, -E_IO);
    struct block_device device;
    if (!find_disk(&device)) {
        printf("dk: no disk\n");
        if (selftest)
            return 1;
        run_server_placeholder(SERVER_NAME_DK, -E_IO);
    }
    announce(&device);
    if (selftest) {
        uint64_t sectors = argc >= 3 ? strtoul(argv[2], NULL, 0) : DEFAULT_SELFTEST_SECTORS;
        return disk_selftest(&device, sectors);
    }
    disk_serve(&device); /* DK_READ / DK_WRITE / DK_INFO over ICAs */
}
