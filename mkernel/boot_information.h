/* boot_information.h: what the m-kernel learns from its loader, in one form
 * whether it came through multiboot1 (QEMU -kernel) or multiboot2 (GRUB):
 * memory map, boot modules, command line, ACPI RSDP and the screen (VGA text
 * or a framebuffer). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "framebuffer_console.h"
#include "memmap.h"

#define BOOT_MAX_REGIONS 128
#define BOOT_MAX_MODULES 8

struct boot_module {
    uint64_t start; /* physical */
    uint64_t end;
    char name[64];
};

struct boot_information {
    const char *protocol; /* "multiboot1" or "multiboot2" */
    char command_line[4096];
    char loader_name[64];
    uint32_t region_count;
    struct memory_region regions[BOOT_MAX_REGIONS];
    uint32_t module_count;
    struct boot_module modules[BOOT_MAX_MODULES];
    uint64_t rsdp_physical; /* 0 when the loader gave no RSDP */
    bool vga_text;          /* the screen is in 80x25 text mode at 0xb8000 */
    bool framebuffer;       /* the loader set a graphics mode: framebuffer_format */
    struct framebuffer_format framebuffer_format;
    uint8_t framebuffer_type;      /* the tag's type: 0 indexed, 1 direct RGB, 2 EGA text */
    uint64_t info_start, info_end; /* the loader's structure, physical */
};

/* Reads the loader's structure at `info_physical` (reachable through the
 * direct map) into `boot`; false with a message for an unknown `magic`. */
bool boot_information_read(uint32_t magic, uint64_t info_physical, struct boot_information *boot);
