/* ica_services.h: the m-kernel's part of ICA communication: the pools of
 * ICA slots and their frames, server registration with per-core request
 * rings, page tables for the ICA windows, and clean-up when a process ends. */
#pragma once
#include <stdint.h>
#include "intercore.h"
#include "process.h"

/* Allocates the descriptor pools; false when out of memory. */
bool ica_services_init(void);
/* Builds the page tables of the control-ICA window in a new address space. */
long ica_prepare_process(uint64_t root);
/* Frees or returns everything a finished process held, before its address
 * space goes: its ICAs, requests travelling to it, its server registration. */
void ica_release_process(struct process *process);
/* A new ICA held by `pid` (counted against its limit); its id or -E_*. */
long ica_services_allocate(uint32_t pid, uint32_t kind, uint64_t bytes);
/* A data ICA held by `pid` made of existing contiguous frames (a swapped-out block). */
long ica_services_adopt(uint32_t pid, uint64_t physical, uint64_t pages);
/* A block ICA held by `pid` over the page `physical` of its persistent
 * memory (checked by device_block.c); never freed as a frame. Its id or -E_*. */
long ica_services_device_block(uint32_t pid, uint64_t physical);
/* Frees the slot but not the frames, which have gone into an address space. */
struct ica;
void ica_services_forget(struct ica *ica);
/* Unmaps an ICA `process` holds and frees it (slot and frames). */
void ica_services_free_held(struct process *process, uint64_t id);
/* Its inter-core services (serve_*) are declared in formica/protocol/mkernel_services.h. */
