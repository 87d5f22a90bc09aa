/* program_loader.h: puts a user program from the boot image into a fresh
 * address space: its ELF segments, a stack holding argc/argv, a heap start. */
#pragma once
#include <stdint.h>

struct loaded_program {
    uint64_t root;
    uint64_t entry;
    uint64_t stack_pointer; /* 16-byte aligned, argv laid out above it */
    uint64_t argc, argv;    /* values for rdi and rsi */
    uint64_t heap_start;
    uint64_t memory_bytes;
};

/* Loads `file` (an ELF image of `size` bytes) with argv[0] = name and the
 * space-separated `arguments`. 0, or -E_BAD_PROGRAM / -E_NO_MEMORY / -E_TOO_BIG
 * with nothing left allocated. */
long program_load(const uint8_t *file, uint64_t size, const char *name, const char *arguments,
                  struct loaded_program *program);
