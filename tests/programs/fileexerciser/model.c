/* model.c: fileexerciser's shadow copy of the file: its bytes and size as
 * the operations so far must have left them, and the bytes each write
 * writes (they encode the write's number and offset). */
#include "exerciser.h"
#include <stdlib.h>
#include <string.h>

void written_bytes(uint32_t operation_number, uint64_t offset, uint64_t length, uint8_t *buffer)
{
    for (uint64_t i = 0; i < length; i++)
        buffer[i] = written_byte(operation_number, offset + i);
}

bool model_start(struct model *model, uint64_t max_file_bytes)
{
    model->bytes = calloc(1, max_file_bytes);
    model->size = 0;
    model->max_file_bytes = max_file_bytes;
    return model->bytes != NULL;
}

/* The size becomes `size`: bytes cut off are zeroed (an extension reads 0). */
static void model_resize(struct model *model, uint64_t size)
{
    if (size < model->size)
        memset(model->bytes + size, 0, model->size - size);
    model->size = size;
}

void model_apply(struct model *model, const struct operation *operation)
{
    switch (operation->kind) {
    case OPERATION_WRITE:
    case OPERATION_PWRITE:
    case OPERATION_WRITEBLOCK:
    case OPERATION_WRITEBYTE:
        written_bytes(operation->number, operation->offset, operation->length,
                      model->bytes + operation->offset);
        if (operation->offset + operation->length > model->size)
            model->size = operation->offset + operation->length;
        break;
    case OPERATION_TRUNCATE:
        model_resize(model, operation->length);
        break;
    case OPERATION_REOPEN:
        if (operation->flags & REOPEN_TRUNCATE)
            model_resize(model, 0);
        break;
    }
}
