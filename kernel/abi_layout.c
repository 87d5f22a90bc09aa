/* abi_layout.c: the sizes of the structures system calls share with user
 * space (lib/include/formica/), pinned. A failing assertion here means an
 * ABI change: rebuild every program and the Linux guest, then update it. */
#include <formica/ica.h>
#include <formica/syscalls.h>

_Static_assert(sizeof(struct spawn_request) == 336, "struct spawn_request changed size");
_Static_assert(sizeof(struct process_info) == 120, "struct process_info changed size");
_Static_assert(sizeof(struct core_info) == 168, "struct core_info changed size");
_Static_assert(sizeof(struct placement_info) == 3192, "struct placement_info changed size");
_Static_assert(sizeof(struct server_instance_info) == 24,
               "struct server_instance_info changed size");
_Static_assert(sizeof(struct clock_info) == 24, "struct clock_info changed size");
_Static_assert(sizeof(struct dma_region) == 24, "struct dma_region changed size");
_Static_assert(sizeof(struct ica_control) == 248, "struct ica_control changed size");
_Static_assert(sizeof(struct ica_stats) == 72, "struct ica_stats changed size");
