/* nvm_order_record.c: records the writes, flushes and fences the flush
 * layer makes in one region, as an observer (formica/nvm_persist.h), and
 * prints them as @json nvm_order lines (formica/nvm_order_record.h). */
#include <formica/nvm_order_record.h>
#include <formica/nvm_persist.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECORDS_PER_LINE 24

enum record_operation { RECORD_WRITE = 'w', RECORD_FLUSH = 'f', RECORD_FENCE = 's' };

struct record {
    uint64_t offset;
    uint64_t value; /* a write of at most 8 bytes: the bytes written, little-endian */
    uint32_t bytes;
    uint32_t operation;
};

static struct {
    uintptr_t base;
    uint64_t bytes;
    struct record *records;
    uint32_t capacity, count;
    uint64_t dropped;
} recording;

static void record(uint32_t operation, const void *address, size_t bytes)
{
    uintptr_t at = (uintptr_t)address;
    if (operation != RECORD_FENCE &&
        (at < recording.base || at - recording.base >= recording.bytes))
        return; /* outside the region: not this recording's */
    if (recording.count == recording.capacity) {
        recording.dropped++;
        return;
    }
    struct record *entry = &recording.records[recording.count++];
    *entry = (struct record){.operation = operation, .bytes = (uint32_t)bytes};
    if (operation == RECORD_FENCE)
        return;
    entry->offset = at - recording.base;
    if (operation == RECORD_WRITE && bytes <= sizeof entry->value)
        memcpy(&entry->value, address, bytes);
}

static void wrote(void *context, const void *address, size_t bytes)
{
    (void)context;
    record(RECORD_WRITE, address, bytes);
}

static void flushed(void *context, const void *address, size_t bytes)
{
    (void)context;
    record(RECORD_FLUSH, address, bytes);
}

static void fenced(void *context)
{
    (void)context;
    record(RECORD_FENCE, NULL, 0);
}

static const struct nvm_observer recorder = {wrote, flushed, fenced, NULL};

bool nvm_record_open(const void *base, uint64_t bytes)
{
    char value[16];
    if (kernel_option(NVM_RECORD_OPTION, value, sizeof value) <= 0)
        return false;
    unsigned long capacity = strtoul(value, NULL, 0);
    if (capacity == 0 || capacity > NVM_RECORD_MAX) {
        printf("nvm_record=%s: not a count of 1 to %u records; not recording\n", value,
               NVM_RECORD_MAX);
        return false;
    }
    nvm_observe(NULL);
    free(recording.records);
    recording.records = malloc(capacity * sizeof *recording.records);
    if (recording.records == NULL) {
        printf("nvm_record: no memory for %lu records; not recording\n", capacity);
        return false;
    }
    recording.base = (uintptr_t)base;
    recording.bytes = bytes;
    recording.capacity = (uint32_t)capacity;
    recording.count = 0;
    recording.dropped = 0;
    nvm_observe(&recorder);
    return true;
}

bool nvm_recording(void)
{
    return recording.records != NULL;
}

static void print_record(const struct record *entry, bool first)
{
    const char *comma = first ? "" : ",";
    if (entry->operation == RECORD_FENCE)
        printf("%s[\"s\"]", comma);
    else if (entry->operation == RECORD_FLUSH)
        printf("%s[\"f\",%lu,%u]", comma, entry->offset, entry->bytes);
    else
        printf("%s[\"w\",%lu,%u,%lu]", comma, entry->offset, entry->bytes, entry->value);
}

void nvm_record_dump(const char *who)
{
    if (recording.records == NULL)
        return;
    uint32_t at = 0;
    do {
        uint32_t end =
            at + RECORDS_PER_LINE < recording.count ? at + RECORDS_PER_LINE : recording.count;
        printf("@json {\"kind\":\"nvm_order\",\"who\":\"%s\",\"first\":%u,\"records\":[", who, at);
        for (uint32_t i = at; i < end; i++)
            print_record(&recording.records[i], i == at);
        printf("],\"recorded\":%u,\"dropped\":%lu,\"last\":%s}\n", recording.count,
               recording.dropped, end == recording.count ? "true" : "false");
        at = end;
    } while (at < recording.count);
    recording.count = 0;
    recording.dropped = 0;
}
