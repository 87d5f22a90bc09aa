/* data_ica.c: the size check of a received data ICA. An ICA is mapped from
 * its window's start, one page after another, so probing the last page
 * needed is enough; SYS_SERVER_LOOKUP reads a string from a user address
 * and answers -E_FAULT, without side effects, when that page is unmapped. */
#include <formica/data_ica.h>
#include <formica/errors.h>
#include <formica/ica.h>
#include <formica/request.h>

#define PAGE_BYTES 4096u

bool data_ica_holds(uint64_t id, uint64_t bytes)
{
    if (ica_kind(id) != ICA_KIND_DATA || bytes > ICA_DATA_MAX_BYTES)
        return false;
    if (bytes == 0)
        return true;
    uint64_t last_page = (bytes - 1) / PAGE_BYTES * PAGE_BYTES;
    const char *probe = (const char *)ica_address(id) + last_page;
    return server_lookup(probe) != -E_FAULT;
}
