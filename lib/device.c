/* device.c: wrappers of the device system calls and of a spawn that passes
 * SPAWN_* flags. Thin: every check is the kernel's (device_map_whole only
 * joins the pieces of a range larger than one call maps). */
#include <formica/device.h>
#include <formica/errors.h>
#include <formica/user.h>
#include <string.h>

long spawn_with_flags(const char *program, const char *arguments, uint32_t core, uint32_t priority,
                      uint32_t flags)
{
    return spawn_with_rights(program, arguments, core, priority, flags, 0);
}

long spawn_with_rights(const char *program, const char *arguments, uint32_t core, uint32_t priority,
                       uint32_t flags, uint32_t rights)
{
    struct spawn_request request;
    long error = spawn_request_fill(&request, program, arguments, core, priority);
    if (error != 0)
        return error;
    request.flags = flags;
    request.rights = rights;
    return spawn_request_send(&request);
}

long spawn_request_fill(struct spawn_request *request, const char *program, const char *arguments,
                        uint32_t core, uint32_t priority)
{
    memset(request, 0, sizeof *request);
    if (arguments == NULL)
        arguments = "";
    if (strlen(program) >= NAME_BYTES || strlen(arguments) >= ARGUMENTS_BYTES)
        return -E_TOO_BIG;
    strncpy(request->program, program, NAME_BYTES - 1);
    strncpy(request->arguments, arguments, ARGUMENTS_BYTES - 1);
    request->core = core;
    request->priority = priority;
    return 0;
}

long spawn_request_send(const struct spawn_request *request)
{
    return syscall6(SYS_SPAWN, (long)request, 0, 0, 0, 0, 0);
}

long pci_config_read(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                     uint32_t width)
{
    return syscall6(SYS_PCI_CONFIG_READ, bus, device, function, offset, width, 0);
}

long pci_config_write(uint32_t bus, uint32_t device, uint32_t function, uint32_t offset,
                      uint32_t width, uint32_t value)
{
    return syscall6(SYS_PCI_CONFIG_WRITE, bus, device, function, offset, width, value);
}

long device_map(uint64_t physical, uint64_t bytes)
{
    return syscall6(SYS_DEVICE_MAP, (long)physical, (long)bytes, 0, 0, 0, 0);
}

long device_block_ica(uint64_t physical)
{
    return syscall6(SYS_ICA_DEVICE_BLOCK, (long)physical, 0, 0, 0, 0, 0);
}

long device_map_whole(uint64_t physical, uint64_t bytes, uint8_t **out)
{
    uint8_t *start = NULL;
    for (uint64_t done = 0; done < bytes; done += DEVICE_MAP_LIMIT) {
        uint64_t piece = bytes - done < DEVICE_MAP_LIMIT ? bytes - done : DEVICE_MAP_LIMIT;
        long address = device_map(physical + done, piece);
        if (address < 0)
            return address;
        if (start == NULL)
            start = (uint8_t *)address;
        else if ((uint8_t *)address != start + done)
            return -E_INVALID;
    }
    *out = start;
    return 0;
}

long dma_allocate(uint64_t bytes, struct dma_region *region)
{
    return syscall6(SYS_DMA_ALLOCATE, (long)bytes, (long)region, 0, 0, 0, 0);
}

long irq_attach(uint32_t line)
{
    return syscall6(SYS_IRQ_ATTACH, line, 0, 0, 0, 0, 0);
}

long irq_wait(void)
{
    return syscall6(SYS_IRQ_WAIT, 0, 0, 0, 0, 0, 0);
}

long irq_wait_timeout(uint64_t milliseconds)
{
    return syscall6(SYS_IRQ_WAIT, (long)milliseconds, 0, 0, 0, 0, 0);
}

long irq_attach_msi(uint32_t bus, uint32_t device, uint32_t function, struct msi_message *message)
{
    return syscall6(SYS_IRQ_ATTACH_MSI, bus, device, function, (long)message, 0, 0);
}

long console_input(const void *bytes, uint64_t length)
{
    return syscall6(SYS_CONSOLE_INPUT, (long)bytes, (long)length, 0, 0, 0, 0);
}

long keyboard_ready(uint32_t keyboard)
{
    return syscall6(SYS_KEYBOARD_READY, keyboard, 0, 0, 0, 0, 0);
}
