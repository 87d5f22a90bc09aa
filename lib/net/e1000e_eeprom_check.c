/* e1000e_eeprom_check.c: whether an 82574L EEPROM image is usable: its
 * words 0x00-0x3f sum to 0xbaba and words 0-2 hold a unicast MAC address.
 * Pure: tests/unit/test_e1000e_eeprom.c runs it on the host. */
#include "e1000e_eeprom.h"

uint16_t e1000e_eeprom_sum(const uint16_t words[E1000E_EEPROM_CHECKED_WORDS])
{
    uint16_t sum = 0;
    for (unsigned i = 0; i < E1000E_EEPROM_CHECKED_WORDS; i++)
        sum = (uint16_t)(sum + words[i]);
    return sum;
}

static bool mac_usable(const uint8_t mac[6])
{
    bool all_zero = true, all_ones = true;
    for (unsigned i = 0; i < 6; i++) {
        all_zero = all_zero && mac[i] == 0;
        all_ones = all_ones && mac[i] == 0xff;
    }
    return !all_zero && !all_ones && (mac[0] & 1) == 0; /* bit 0: a group address */
}

enum e1000e_eeprom_verdict e1000e_eeprom_check(const uint16_t words[E1000E_EEPROM_CHECKED_WORDS],
                                               uint8_t mac[6])
{
    if (e1000e_eeprom_sum(words) != E1000E_EEPROM_SUM)
        return E1000E_EEPROM_BAD_CHECKSUM;
    uint8_t found[6];
    for (unsigned i = 0; i < 3; i++) {
        found[2 * i] = (uint8_t)words[i];
        found[2 * i + 1] = (uint8_t)(words[i] >> 8);
    }
    if (!mac_usable(found))
        return E1000E_EEPROM_NO_MAC;
    for (unsigned i = 0; i < 6; i++)
        mac[i] = found[i];
    return E1000E_EEPROM_GOOD;
}
