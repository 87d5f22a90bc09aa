/* device_syscalls.c: system calls 30-36. PCI configuration and interrupts
 * are served on the caller's core; device mappings and DMA memory change
 * page tables, so the m-kernel does them (mkernel/device_memory.c). */
#include "device_syscalls.h"
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

long sys_pci_config_read(const struct trap_frame *frame)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    if (!pci_config_address_ok(frame->rdi, frame->rsi, frame->rdx, frame->r10, frame->r8))
        return -E_INVALID;
    return pci_config_read((uint32_t)frame->rdi, (uint32_t)frame->rsi, (uint32_t)frame->rdx,
                           (uint32_t)frame->r10, (uint32_t)frame->r8);
}

long sys_pci_config_write(const struct trap_frame *frame)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    if (!pci_config_address_ok(frame->rdi, frame->rsi, frame->rdx, frame->r10, frame->r8))
        return -E_INVALID;
    pci_config_write((uint32_t)frame->rdi, (uint32_t)frame->rsi, (uint32_t)frame->rdx,
                     (uint32_t)frame->r10, (uint32_t)frame->r8, (uint32_t)frame->r9);
    return 0;
}

long sys_device_map(const struct trap_frame *frame)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    struct intercore_message message = {.type = MESSAGE_DEVICE_MAP}, reply;
    message.argument[0] = current()->pid;
    message.argument[1] = frame->rdi;
    message.argument[2] = frame->rsi;
    mkernel_request(&message, &reply);
    return (long)reply.argument[0];
}

long sys_dma_allocate(const struct trap_frame *frame)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    if (!user_range_ok(current()->root, frame->rsi, sizeof(struct dma_region), true))
        return -E_FAULT;
    struct intercore_message message = {.type = MESSAGE_DMA_ALLOCATE}, reply;
    message.argument[0] = current()->pid;
    message.argument[1] = frame->rdi;
    mkernel_request(&message, &reply);
    long result = (long)reply.argument[0];
    if (result < 0)
        return result;
    struct dma_region region = {
        .address = reply.argument[0], .physical = reply.argument[1], .bytes = reply.argument[2]};
    return copy_to_user(frame->rsi, &region, sizeof(region));
}

long sys_irq_attach(const struct trap_frame *frame)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    return irq_attach(current(), frame->rdi);
}

long sys_irq_wait(const struct trap_frame *frame)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    return irq_wait(current(), frame->rdi);
}

long sys_irq_attach_msi(const struct trap_frame *frame)
{
    if (!caller_is_driver())
        return -E_PERMISSION;
    if (!user_range_ok(current()->root, frame->r10, sizeof(struct msi_message), true))
        return -E_FAULT;
    struct msi_message message;
    long error = msi_attach(current(), frame->rdi, frame->rsi, frame->rdx, &message);
    if (error < 0)
        return error;
    return copy_to_user(frame->r10, &message, sizeof(message));
}
