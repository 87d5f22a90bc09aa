/* e1000e_eeprom.c: reads the 82574L's EEPROM words 0x00-0x3f through EERD
 * (start a word's read, poll DONE, take the word from bits 31:16) and checks
 * them. QEMU's card always has a good EEPROM, so kernel option
 * e1000e_fault=eeprom-timeout (no read finishes) or eeprom-checksum (one word
 * read wrong) makes the failures a real card can have, for the tests. */
#include "e1000e_eeprom.h"
#include <formica/errors.h>
#include <formica/net.h>
#include <formica/user.h>
#include <stdio.h>
#include <string.h>

#define READ_DEADLINE_US                                                                           \
    10000 /* a word takes microseconds: 10 ms is a card that does not answer                       \
           */

enum fault { FAULT_NONE, FAULT_TIMEOUT, FAULT_CHECKSUM };

static enum fault injected_fault(void)
{
    char value[32];
    if (kernel_option("e1000e_fault", value, sizeof(value)) < 0)
        return FAULT_NONE;
    if (strcmp(value, "eeprom-timeout") == 0)
        return FAULT_TIMEOUT;
    if (strcmp(value, "eeprom-checksum") == 0)
        return FAULT_CHECKSUM;
    printf("net: e1000e_fault=%s is neither eeprom-timeout nor eeprom-checksum: ignored\n", value);
    return FAULT_NONE;
}

/* One word: true and *word, or false when DONE did not come in time (or,
 * with the timeout fault, as if it never came). */
static bool read_word(volatile uint32_t *registers, unsigned address, bool never_done,
                      uint16_t *word)
{
    e1000e_write(registers, E1000E_EERD,
                 (address << E1000E_EERD_ADDRESS_SHIFT) | E1000E_EERD_START);
    uint64_t deadline = net_now_us() + READ_DEADLINE_US;
    for (;;) {
        uint32_t value = e1000e_read(registers, E1000E_EERD);
        if ((value & E1000E_EERD_DONE) && !never_done) {
            *word = (uint16_t)(value >> E1000E_EERD_DATA_SHIFT);
            return true;
        }
        if (net_now_us() > deadline)
            return false;
        yield();
    }
}

long e1000e_eeprom_load(volatile uint32_t *registers, const char *where, uint8_t mac[6])
{
    enum fault fault = injected_fault();
    const char *injected = fault == FAULT_TIMEOUT    ? " (injected: e1000e_fault=eeprom-timeout)"
                           : fault == FAULT_CHECKSUM ? " (injected: e1000e_fault=eeprom-checksum)"
                                                     : "";
    uint16_t words[E1000E_EEPROM_CHECKED_WORDS];
    for (unsigned address = 0; address < E1000E_EEPROM_CHECKED_WORDS; address++) {
        if (!read_word(registers, address, fault == FAULT_TIMEOUT, &words[address])) {
            printf("net: e1000e at %s: EEPROM read of word 0x%02x did not finish within %u ms%s; "
                   "the card is not used\n",
                   where, address, READ_DEADLINE_US / 1000, injected);
            return -E_IO;
        }
    }
    if (fault == FAULT_CHECKSUM)
        words[E1000E_EEPROM_CHECKED_WORDS - 1] ^= 0x0101; /* a word that read back wrong */
    enum e1000e_eeprom_verdict verdict = e1000e_eeprom_check(words, mac);
    if (verdict == E1000E_EEPROM_BAD_CHECKSUM) {
        printf("net: e1000e at %s: EEPROM words 0x00-0x3f sum to 0x%04x, not 0x%04x%s; "
               "the card is not used\n",
               where, e1000e_eeprom_sum(words), E1000E_EEPROM_SUM, injected);
        return -E_IO;
    }
    if (verdict == E1000E_EEPROM_NO_MAC) {
        printf("net: e1000e at %s: EEPROM words 0-2 (%04x %04x %04x) are no unicast MAC "
               "address; the card is not used\n",
               where, words[0], words[1], words[2]);
        return -E_IO;
    }
    return 0;
}
