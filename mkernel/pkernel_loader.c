/* pkernel_loader.c: loads the p-kernel ELF module. Its segments must lie in
 * the p-kernel's window at the top of the address space; each page gets a
 * fresh zeroed frame, the file bytes are copied in, and the page is mapped. */
#include "pkernel_loader.h"
#include "console.h"
#include "elf.h"
#include "layout.h"
#include "paging.h"
#include "physical_memory.h"
#include <string.h>

static const struct boot_module *find_pkernel_module(const struct boot_information *boot)
{
    for (uint32_t i = 0; i < boot->module_count; i++) {
        const char *name = boot->modules[i].name;
        for (const char *cursor = name; *cursor != '\0'; cursor++)
            if (strncmp(cursor, "pkernel", 7) == 0)
                return &boot->modules[i];
    }
    return boot->module_count > 0 ? &boot->modules[0] : NULL;
}

static int load_segment(const struct elf_image *image, const struct elf_segment *segment)
{
    uint64_t first = segment->virtual_address & ~(uint64_t)(PAGE_SIZE - 1);
    uint64_t end = segment->virtual_address + segment->memory_bytes;
    for (uint64_t page = first; page < end; page += PAGE_SIZE) {
        uint64_t frame = physical_allocate(1, 0);
        if (frame == 0)
            return -1;
        uint8_t *target = phys_to_virt(frame);
        for (uint64_t offset = 0; offset < PAGE_SIZE; offset++) {
            uint64_t address = page + offset;
            if (address < segment->virtual_address)
                continue;
            uint64_t within = address - segment->virtual_address;
            if (within < segment->file_bytes)
                target[offset] = image->file[segment->file_offset + within];
        }
        uint64_t flags = PAGE_GLOBAL | ((segment->flags & ELF_SEGMENT_WRITE) ? PAGE_WRITABLE : 0);
        if (paging_map_kernel_page(page, frame, flags) != 0)
            return -1;
    }
    return 0;
}

uint64_t pkernel_load(const struct boot_information *boot)
{
    const struct boot_module *module = find_pkernel_module(boot);
    if (module == NULL) {
        kprintf("pkernel: no p-kernel boot module (load build/out/pkernel.elf as a module)\n");
        return 0;
    }
    struct elf_image image;
    int error = elf_read(phys_to_virt(module->start), module->end - module->start,
                         PKERNEL_VIRTUAL_BASE, 0xfffffffffffff000ull, &image);
    if (error != ELF_OK) {
        kprintf("pkernel: module '%s' is not a p-kernel image: %s\n", module->name,
                elf_error_text(error));
        return 0;
    }
    for (uint16_t i = 0; i < image.segment_count; i++) {
        if (load_segment(&image, &image.segments[i]) != 0) {
            kprintf("pkernel: out of memory loading the p-kernel\n");
            return 0;
        }
    }
    kprintf("pkernel: image '%s' (%lu bytes, %u segments) mapped, entry 0x%lx\n", module->name,
            module->end - module->start, image.segment_count, image.entry);
    return image.entry;
}
