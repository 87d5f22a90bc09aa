/* kept_region_open.c: mapping a server's kept region and checking it
 * before trusting it (formica/kept_region.h). */
#include <formica/kept_region.h>
#include <formica/user.h>
#include <string.h>

void *kept_region_open(const char *name, uint64_t bytes, uint64_t magic, uint32_t version,
                       bool *restored, long *error)
{
    long address = syscall6(SYS_KEPT_REGION, (long)name, (long)bytes, 0, 0, 0, 0);
    if (address < 0) {
        *error = address;
        return NULL;
    }
    struct kept_header *header = (struct kept_header *)address;
    *restored = kept_header_valid(header, magic, version, bytes);
    if (!*restored) {
        memset(header, 0, bytes);
        kept_header_init(header, magic, version, bytes);
    }
    kept_header_count_start(header);
    *error = 0;
    return header;
}
