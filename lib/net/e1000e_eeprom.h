/* e1000e_eeprom.h: the 82574L's EEPROM: its words read through EERD (with
 * the fault injection of kernel option e1000e_fault=, e1000e_eeprom.c) and
 * what they must hold: a checksum and a MAC address (e1000e_eeprom_check.c,
 * pure, host-tested). */
#pragma once
#include "e1000e_registers.h"
#include <stdbool.h>
#include <stdint.h>

enum e1000e_eeprom_verdict {
    E1000E_EEPROM_GOOD = 0,
    E1000E_EEPROM_BAD_CHECKSUM = 1, /* words 0x00-0x3f do not sum to 0xbaba */
    E1000E_EEPROM_NO_MAC = 2,       /* words 0-2 are zero, all ones, or a multicast address */
};

/* The sum of words 0x00-0x3f (0xbaba in a good EEPROM). */
uint16_t e1000e_eeprom_sum(const uint16_t words[E1000E_EEPROM_CHECKED_WORDS]);
/* Checks the words and, when good, gives the MAC address (word 0's low byte first). */
enum e1000e_eeprom_verdict e1000e_eeprom_check(const uint16_t words[E1000E_EEPROM_CHECKED_WORDS],
                                               uint8_t mac[6]);

/* Reads words 0x00-0x3f through EERD and checks them: 0 and the MAC, or
 * -E_IO with a console line naming the card (`where`) and what went wrong
 * (a read that never finished, a bad checksum, no MAC). */
long e1000e_eeprom_load(volatile uint32_t *registers, const char *where, uint8_t mac[6]);
