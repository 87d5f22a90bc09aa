/* ahci.c: placeholder until the AHCI driver lands. */
#include "block_device.h"
bool ahci_probe(struct block_device *device)
{
    (void)device;
    return false;
}
