/* data_ica.c: the size check of a received data ICA, from the sizes the
 * kernel wrote into the control page when the ICA arrived. */
#include <formica/data_ica.h>

#define PAGE_BYTES 4096u

bool data_ica_holds(const struct ica_control *page, uint32_t index, uint64_t bytes)
{
    if (index >= page->data_count || index >= ICA_MAX_ATTACHED)
        return false;
    if (ica_kind(page->data[index]) != ICA_KIND_DATA || bytes > ICA_DATA_MAX_BYTES)
        return false;
    return bytes <= (uint64_t)page->data_pages[index] * PAGE_BYTES;
}
