/* spin: burns the CPU until killed or for the given number of milliseconds,
 * then reports how many loops it ran: the preemption and kill tests use it. */
#include <formica/user.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    uint64_t milliseconds = argc > 1 ? strtoul(argv[1], NULL, 10) : 0;
    struct clock_info clock;
    clock_get(&clock);
    uint64_t start = read_timestamp_counter();
    uint64_t limit = milliseconds * (clock.tsc_hz / 1000);
    volatile uint64_t loops = 0;
    while (milliseconds == 0 || read_timestamp_counter() - start < limit)
        loops++;
    printf("@json {\"kind\":\"spin\",\"pid\":%ld,\"core\":%ld,\"loops\":%lu}\n", process_id(),
           core_id(), (unsigned long)loops);
    return 0;
}
