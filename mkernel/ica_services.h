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
/* Serves the ICA message types; true when `request` was one of them. */
bool ica_services_handle(const struct intercore_message *request, struct intercore_message *reply);
