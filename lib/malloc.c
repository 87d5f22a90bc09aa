/* malloc.c: a first-fit allocator over the heap that SYS_MEMORY_GROW extends.
 * Free blocks form one list sorted by address, so free() merges a block with
 * its neighbours; the heap grows by at least HEAP_GROWTH_BYTES at a time. */
#include "heap.h"
#include <formica/user.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ALIGNMENT 16
#define PAGE_BYTES 4096
#define HEAP_GROWTH_BYTES (64 * 1024)

/* Every block starts with this 16-byte header; `size` counts the header too
 * and is a multiple of ALIGNMENT. `next_free` is used only while the block is
 * free; the payload starts after the header, so it stays 16-byte aligned. */
struct block {
    size_t size;
    struct block *next_free;
};

#define HEADER_BYTES sizeof(struct block)
#define MINIMUM_BLOCK_BYTES (HEADER_BYTES + ALIGNMENT)

static struct block *free_list; /* sorted by address */

static size_t round_up(size_t value, size_t multiple)
{
    return (value + multiple - 1) / multiple * multiple;
}

static char *block_end(struct block *block)
{
    return (char *)block + block->size;
}

/* Puts `block` into the free list in address order and merges it with the
 * free blocks right before and after it. */
static void insert_free_block(struct block *block)
{
    struct block *previous = NULL, *next = free_list;
    while (next != NULL && next < block) {
        previous = next;
        next = next->next_free;
    }
    block->next_free = next;
    if (next != NULL && block_end(block) == (char *)next) {
        block->size += next->size;
        block->next_free = next->next_free;
    }
    if (previous == NULL) {
        free_list = block;
    } else if (block_end(previous) == (char *)block) {
        previous->size += block->size;
        previous->next_free = block->next_free;
    } else {
        previous->next_free = block;
    }
}

/* Asks the kernel for at least `bytes` more heap and frees it into the list. */
static bool grow_heap(size_t bytes)
{
    size_t growth = round_up(bytes > HEAP_GROWTH_BYTES ? bytes : HEAP_GROWTH_BYTES, PAGE_BYTES);
    long old_end = memory_grow(growth);
    if (old_end < 0)
        return false;
    struct block *block = (struct block *)(uintptr_t)old_end;
    block->size = growth;
    insert_free_block(block);
    return true;
}

/* Takes `size` bytes from the first free block large enough, splitting off
 * the rest when it can hold a block of its own. */
static struct block *take_first_fit(size_t size)
{
    struct block **link = &free_list;
    for (struct block *block = free_list; block != NULL; block = block->next_free) {
        if (block->size >= size) {
            if (block->size - size >= MINIMUM_BLOCK_BYTES) {
                struct block *rest = (struct block *)((char *)block + size);
                rest->size = block->size - size;
                rest->next_free = block->next_free;
                block->size = size;
                *link = rest;
            } else {
                *link = block->next_free;
            }
            return block;
        }
        link = &block->next_free;
    }
    return NULL;
}

void *malloc(size_t size)
{
    if (size > SIZE_MAX / 2)
        return NULL;
    size_t block_size = HEADER_BYTES + round_up(size == 0 ? 1 : size, ALIGNMENT);
    struct block *block = take_first_fit(block_size);
    if (block == NULL && grow_heap(block_size))
        block = take_first_fit(block_size);
    return block == NULL ? NULL : (char *)block + HEADER_BYTES;
}

static struct block *block_of(void *pointer)
{
    return (struct block *)((char *)pointer - HEADER_BYTES);
}

void free(void *pointer)
{
    if (pointer != NULL)
        insert_free_block(block_of(pointer));
}

void *calloc(size_t count, size_t size)
{
    if (size != 0 && count > SIZE_MAX / size)
        return NULL;
    void *pointer = malloc(count * size);
    if (pointer != NULL)
        memset(pointer, 0, count * size);
    return pointer;
}

/* Keeps the block when it is already large enough; else moves the data.
 * realloc(pointer, 0) frees the block and returns NULL. */
void *realloc(void *pointer, size_t size)
{
    if (pointer == NULL)
        return malloc(size);
    if (size == 0) {
        free(pointer);
        return NULL;
    }
    size_t capacity = block_of(pointer)->size - HEADER_BYTES;
    if (size <= capacity)
        return pointer;
    void *moved = malloc(size);
    if (moved != NULL) {
        memcpy(moved, pointer, capacity);
        free(pointer);
    }
    return moved;
}

/* The same functions for flmalloc's local path (heap.h): --wrap redirects
 * only the name malloc, never these. */
void *heap_malloc(size_t size) __attribute__((alias("malloc")));
void heap_free(void *pointer) __attribute__((alias("free")));
