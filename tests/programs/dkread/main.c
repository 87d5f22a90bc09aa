/* tests/programs/dkread: reads sectors straight from DK with DK_READ requests, as BLK
 * does, from whatever core it runs on (DK's NVMe driver gives each
 * requesting core its own queue pair). `dkread [SECTORS [PER_REQUEST]]`
 * prints @json {"kind":"dkread","core":C,"sectors":N,"requests":R,
 * "result":E,"cksum":K,"elapsed_us":T} with K the POSIX cksum of the bytes read. */
#include <formica/cksum.h>
#include <formica/request.h>
#include <formica/storage.h>
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>

#define SECTOR 512u
#define DEFAULT_SECTORS 2048u
#define DEFAULT_PER_REQUEST 128u
#define MAX_PER_REQUEST (ICA_DATA_MAX_BYTES / SECTOR)

static long read_sectors(long dk, uint64_t control, uint64_t data, uint64_t first, uint32_t count)
{
    request_prepare(control, DK_READ);
    struct ica_control *page = ica_control_of(control);
    *dk_read_of(page) = (struct dk_read_message){first, count};
    request_attach(control, data);
    long error = ica_request(dk, control, ICA_SYNC);
    return error != 0 ? error : page->result;
}

int main(int argc, char **argv)
{
    uint32_t sectors = argc >= 2 ? (uint32_t)strtoul(argv[1], NULL, 0) : DEFAULT_SECTORS;
    uint32_t per_request = argc >= 3 ? (uint32_t)strtoul(argv[2], NULL, 0) : DEFAULT_PER_REQUEST;
    if (per_request == 0 || per_request > MAX_PER_REQUEST) {
        printf("dkread: 1..%u sectors per request\n", MAX_PER_REQUEST);
        return 2;
    }
    long dk = server_wait_for(SERVER_NAME_DK, 5000);
    long control = ica_allocate(ICA_KIND_CONTROL, 4096);
    long data = ica_allocate(ICA_KIND_DATA, (uint64_t)per_request * SECTOR);
    if (dk < 0 || control < 0 || data < 0) {
        printf("dkread: no DK or no ICAs\n");
        return 1;
    }
    struct cksum_state sum;
    cksum_begin(&sum);
    uint64_t start = read_timestamp_counter();
    long result = 0;
    uint32_t requests = 0;
    for (uint32_t done = 0; done < sectors && result >= 0; done += per_request, requests++) {
        uint32_t count = sectors - done < per_request ? sectors - done : per_request;
        result = read_sectors(dk, (uint64_t)control, (uint64_t)data, done, count);
        if (result >= 0)
            cksum_add(&sum, ica_address((uint64_t)data), (size_t)count * SECTOR);
    }
    uint64_t cycles = read_timestamp_counter() - start; /* the checksum included */
    struct clock_info clock;
    uint64_t elapsed_us = clock_get(&clock) == 0 && clock.tsc_hz != 0
                              ? (uint64_t)((__uint128_t)cycles * 1000000u / clock.tsc_hz)
                              : 0;
    printf("@json {\"kind\":\"dkread\",\"core\":%ld,\"sectors\":%u,\"requests\":%u,"
           "\"result\":%ld,\"cksum\":%u,\"elapsed_us\":%lu}\n",
           core_id(), sectors, requests, result < 0 ? result : 0, cksum_end(&sum), elapsed_us);
    return result < 0 ? 1 : 0;
}
