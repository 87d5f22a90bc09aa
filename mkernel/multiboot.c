/* multiboot.c: turns the multiboot1 information structure or the multiboot2
 * tag list into a boot_information. Strings are copied and bounded; the
 * loader's memory is not trusted to stay intact after frames are handed out. */
#include "boot_information.h"
#include "console.h"
#include "layout.h"
#include <string.h>

#define MULTIBOOT1_MAGIC 0x2badb002
#define MULTIBOOT2_MAGIC 0x36d76289

#define MB1_FLAG_MEMORY_MAP (1u << 6)
#define MB1_FLAG_COMMAND_LINE (1u << 2)
#define MB1_FLAG_MODULES (1u << 3)
#define MB1_FLAG_LOADER_NAME (1u << 9)
#define MB1_FLAG_FRAMEBUFFER (1u << 12)

#define MB2_TAG_END 0
#define MB2_TAG_COMMAND_LINE 1
#define MB2_TAG_LOADER_NAME 2
#define MB2_TAG_MODULE 3
#define MB2_TAG_MEMORY_MAP 6
#define MB2_TAG_FRAMEBUFFER 8
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15
#define MB2_FRAMEBUFFER_RGB 1
#define MB2_FRAMEBUFFER_EGA_TEXT 2

struct mb1_info {
    uint32_t flags, memory_lower, memory_upper, boot_device, command_line;
    uint32_t module_count, module_address;
    uint32_t symbols[4];
    uint32_t memory_map_length, memory_map_address;
    uint32_t drives_length, drives_address, config_table, loader_name;
    uint32_t apm_table, vbe[4];
    uint64_t framebuffer_address;
    uint32_t framebuffer_pitch, framebuffer_width, framebuffer_height;
    uint8_t framebuffer_bpp, framebuffer_type;
} __attribute__((packed));

struct mb1_module {
    uint32_t start, end, name, reserved;
};

#define MODULE_NAME_SCAN_BYTES 4096 /* a module name longer than this is cut at its start */

static void copy_string(char *destination, size_t size, const char *source)
{
    size_t length = strnlen(source, size - 1);
    memcpy(destination, source, length);
    destination[length] = '\0';
}

/* Copies the last `size - 1` bytes of `source`: a module's name is its path, and
 * the file name at its end is what tells the modules apart (a long checkout path
 * must not cut it off). */
static void copy_string_tail(char *destination, size_t size, const char *source)
{
    size_t length = strnlen(source, MODULE_NAME_SCAN_BYTES);
    copy_string(destination, size, length < size ? source : source + length - (size - 1));
}

static void add_region(struct boot_information *boot, uint64_t base, uint64_t length, uint32_t type)
{
    if (boot->region_count < BOOT_MAX_REGIONS)
        boot->regions[boot->region_count++] =
            (struct memory_region){base, length, type >= 1 && type <= 5 ? type : MEMORY_RESERVED};
}

static void add_module(struct boot_information *boot, uint64_t start, uint64_t end,
                       const char *name)
{
    if (boot->module_count == BOOT_MAX_MODULES)
        return;
    struct boot_module *module = &boot->modules[boot->module_count++];
    module->start = start;
    module->end = end;
    copy_string_tail(module->name, sizeof(module->name), name);
}

static void read_multiboot1(uint64_t info_physical, struct boot_information *boot)
{
    const struct mb1_info *info = phys_to_virt(info_physical);
    boot->protocol = "multiboot1";
    boot->info_start = info_physical;
    boot->info_end = info_physical + sizeof(*info);
    if (info->flags & MB1_FLAG_COMMAND_LINE)
        copy_string(boot->command_line, sizeof(boot->command_line),
                    phys_to_virt(info->command_line));
    if (info->flags & MB1_FLAG_LOADER_NAME)
        copy_string(boot->loader_name, sizeof(boot->loader_name), phys_to_virt(info->loader_name));
    if (info->flags & MB1_FLAG_MEMORY_MAP) {
        const uint8_t *cursor = phys_to_virt(info->memory_map_address);
        const uint8_t *end = cursor + info->memory_map_length;
        while (cursor < end) {
            uint32_t size;
            uint64_t base, length;
            uint32_t type;
            memcpy(&size, cursor, 4);
            memcpy(&base, cursor + 4, 8);
            memcpy(&length, cursor + 12, 8);
            memcpy(&type, cursor + 20, 4);
            add_region(boot, base, length, type);
            cursor += size + 4;
        }
    }
    if (info->flags & MB1_FLAG_MODULES) {
        const struct mb1_module *modules = phys_to_virt(info->module_address);
        for (uint32_t i = 0; i < info->module_count; i++)
            add_module(boot, modules[i].start, modules[i].end,
                       modules[i].name ? (const char *)phys_to_virt(modules[i].name) : "");
    }
    boot->vga_text = !(info->flags & MB1_FLAG_FRAMEBUFFER) || info->framebuffer_type == 2;
}

static void read_mb2_memory_map(const uint8_t *tag, uint32_t tag_size,
                                struct boot_information *boot)
{
    uint32_t entry_size;
    memcpy(&entry_size, tag + 8, 4);
    if (entry_size < 24)
        return;
    for (uint32_t offset = 16; offset + entry_size <= tag_size; offset += entry_size) {
        uint64_t base, length;
        uint32_t type;
        memcpy(&base, tag + offset, 8);
        memcpy(&length, tag + offset + 8, 8);
        memcpy(&type, tag + offset + 16, 4);
        add_region(boot, base, length, type);
    }
}

/* Tag 8: address (8), pitch (16), width (20), height (24), bits per pixel
 * (28), type (29: 0 indexed, 1 direct RGB, 2 EGA text); for direct RGB the
 * red, green and blue field positions and sizes follow from byte 32. */
static void read_mb2_framebuffer(const uint8_t *tag, uint32_t size, struct boot_information *boot)
{
    if (size < 30)
        return;
    struct framebuffer_format *format = &boot->framebuffer_format;
    memcpy(&format->physical, tag + 8, 8);
    memcpy(&format->pitch, tag + 16, 4);
    memcpy(&format->width, tag + 20, 4);
    memcpy(&format->height, tag + 24, 4);
    format->bits_per_pixel = tag[28];
    boot->framebuffer_type = tag[29];
    boot->vga_text = boot->framebuffer_type == MB2_FRAMEBUFFER_EGA_TEXT;
    boot->framebuffer = boot->framebuffer_type != MB2_FRAMEBUFFER_EGA_TEXT;
    if (boot->framebuffer_type == MB2_FRAMEBUFFER_RGB && size >= 38) {
        format->red_position = tag[32];
        format->red_size = tag[33];
        format->green_position = tag[34];
        format->green_size = tag[35];
        format->blue_position = tag[36];
        format->blue_size = tag[37];
    }
}

static void read_mb2_tag(const uint8_t *tag, uint32_t type, uint32_t size,
                         struct boot_information *boot)
{
    uint32_t start, end;
    switch (type) {
    case MB2_TAG_COMMAND_LINE:
        copy_string(boot->command_line, sizeof(boot->command_line), (const char *)tag + 8);
        break;
    case MB2_TAG_LOADER_NAME:
        copy_string(boot->loader_name, sizeof(boot->loader_name), (const char *)tag + 8);
        break;
    case MB2_TAG_MODULE:
        memcpy(&start, tag + 8, 4);
        memcpy(&end, tag + 12, 4);
        add_module(boot, start, end, (const char *)tag + 16);
        break;
    case MB2_TAG_MEMORY_MAP:
        read_mb2_memory_map(tag, size, boot);
        break;
    case MB2_TAG_FRAMEBUFFER:
        read_mb2_framebuffer(tag, size, boot);
        break;
    case MB2_TAG_ACPI_OLD:
    case MB2_TAG_ACPI_NEW:
        if (boot->rsdp_physical == 0 || type == MB2_TAG_ACPI_NEW)
            boot->rsdp_physical = virt_to_phys(tag + 8);
        break;
    default:
        break;
    }
}

static void read_multiboot2(uint64_t info_physical, struct boot_information *boot)
{
    const uint8_t *info = phys_to_virt(info_physical);
    uint32_t total;
    memcpy(&total, info, 4);
    boot->protocol = "multiboot2";
    boot->info_start = info_physical;
    boot->info_end = info_physical + total;
    boot->vga_text = false; /* GRUB under UEFI has none; under BIOS its tag says so */
    for (uint32_t offset = 8; offset + 8 <= total;) {
        uint32_t type, size;
        memcpy(&type, info + offset, 4);
        memcpy(&size, info + offset + 4, 4);
        if (type == MB2_TAG_END || size < 8)
            break;
        read_mb2_tag(info + offset, type, size, boot);
        offset += (size + 7) & ~7u;
    }
}

bool boot_information_read(uint32_t magic, uint64_t info_physical, struct boot_information *boot)
{
    memset(boot, 0, sizeof(*boot));
    if (magic == MULTIBOOT1_MAGIC) {
        read_multiboot1(info_physical, boot);
        return true;
    }
    if (magic == MULTIBOOT2_MAGIC) {
        read_multiboot2(info_physical, boot);
        return true;
    }
    kprintf("boot: unknown loader magic 0x%x: not started by a multiboot loader\n", magic);
    return false;
}
