/* device_syscalls.c: system calls 30-37. PCI configuration and interrupts
 * are served on the caller's core; device mappings and DMA memory change
 * page tables, so the m-kernel does them (mkernel/device_memory.c). */
#include "console.h"
#include "cpu.h"
#include "device_state.h"
#include "irq.h"
#include "msi.h"
#include "mkernel_client.h"
#include "pci_config.h"
#include "user_memory.h"
#include <formica/errors.h>
#include <formica/syscalls.h>

static struct process *current(void)
{
    return this_cpu()->current;
}

static bool caller_is_driver(void)
{
    return device_is_driver(current());
}

long sys_pci_config_read(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                         uint32_t width)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    if (!pci_config_address_ok(bus, device, function, offset, width))
        return -E_INVALID;
    return pci_config_read(bus, device, function, offset, width);
}

long sys_pci_config_write(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                          uint32_t width, uint32_t value)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    if (!pci_config_address_ok(bus, device, function, offset, width))
        return -E_INVALID;
    pci_config_write(bus, device, function, offset, width, value);
    return 0;
}

long sys_device_map(uint64_t physical, uint64_t bytes)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    struct intercore_message message = {.type = MESSAGE_DEVICE_MAP,
                                        .device_map = {current()->pid, physical, bytes}};
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    return reply.device_map_reply.address;
}

long sys_ica_device_block(uint64_t physical)
{
    if (!caller_is_driver()) {
        kprintf("ica: pid %u: device block 0x%lx refused: not a driver\n", current()->pid,
                physical);
        return -E_PERMISSION;
    }
    struct intercore_message message = {.type = MESSAGE_ICA_DEVICE_BLOCK,
                                        .ica_device_block = {current()->pid, physical}};
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    return reply.ica_device_block_reply.id;
}

long sys_dma_allocate(uint64_t bytes, uint64_t region)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    if (!user_range_ok(current()->root, region, sizeof(struct dma_region), true))
        return -E_FAULT;
    struct intercore_message message = {.type = MESSAGE_DMA_ALLOCATE,
                                        .dma_allocate = {current()->pid, bytes}};
    struct intercore_message reply;
    mkernel_request(&message, &reply);
    const struct intercore_dma_allocate_reply *answer = &reply.dma_allocate_reply;
    if (answer->address < 0)
        return answer->address;
    struct dma_region filled = {
        .address = (uint64_t)answer->address, .physical = answer->physical, .bytes = answer->bytes};
    return copy_to_user(region, &filled, sizeof(filled));
}

long sys_irq_attach(uint32_t line)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    return irq_attach(current(), line);
}

long sys_irq_wait(uint64_t timeout_ms)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    return irq_wait(current(), timeout_ms);
}

long sys_irq_attach_msi(uint32_t bus, uint32_t device, uint32_t function, uint64_t message_address)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    if (!user_range_ok(current()->root, message_address, sizeof(struct msi_message), true))
        return -E_FAULT;
    struct msi_message message;
    long error = msi_attach(current(), bus, device, function, &message);
    if (error < 0)
        return error;
    return copy_to_user(message_address, &message, sizeof(message));
}
