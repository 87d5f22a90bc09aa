/* test_e1000e_eeprom.c: host tests of lib/net/e1000e_eeprom_check.c: an
 * EEPROM image whose words 0x00-0x3f sum to 0xbaba gives the MAC of words
 * 0-2 (low byte first); a changed word, a blank (all ones) or zero image, and
 * a multicast address in words 0-2 are refused with their own verdict. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "e1000e_eeprom.h"

#define WORDS E1000E_EEPROM_CHECKED_WORDS

/* An image as a card's EEPROM holds it: the MAC, some settings, the checksum word last. */
static void good_image(uint16_t words[WORDS], const uint8_t mac[6])
{
    for (unsigned i = 0; i < WORDS; i++)
        words[i] = (uint16_t)(0x1000 + i * 0x0101);
    for (unsigned i = 0; i < 3; i++)
        words[i] = (uint16_t)(mac[2 * i] | mac[2 * i + 1] << 8);
    words[WORDS - 1] = 0;
    words[WORDS - 1] = (uint16_t)(E1000E_EEPROM_SUM - e1000e_eeprom_sum(words));
}

static void test_good_image_gives_its_mac(void **state)
{
    (void)state;
    const uint8_t expected[6] = {0x52, 0x54, 0x00, 0x4d, 0x4e, 0x01};
    uint16_t words[WORDS];
    good_image(words, expected);
    assert_int_equal(e1000e_eeprom_sum(words), E1000E_EEPROM_SUM);
    uint8_t mac[6] = {0};
    assert_int_equal(e1000e_eeprom_check(words, mac), E1000E_EEPROM_GOOD);
    assert_memory_equal(mac, expected, 6);
}

static void test_any_changed_word_breaks_the_checksum(void **state)
{
    (void)state;
    const uint8_t address[6] = {0x00, 0x1b, 0x21, 0x3a, 0x4c, 0x5d};
    for (unsigned changed = 0; changed < WORDS; changed++) {
        uint16_t words[WORDS];
        good_image(words, address);
        words[changed] ^= 0x0101; /* what e1000e_fault=eeprom-checksum does to word 0x3f */
        uint8_t mac[6] = {0xaa, 0xaa, 0xaa, 0xaa, 0xaa, 0xaa};
        assert_int_equal(e1000e_eeprom_check(words, mac), E1000E_EEPROM_BAD_CHECKSUM);
        assert_int_equal(mac[0], 0xaa); /* nothing given on a refusal */
    }
}

static void test_blank_and_zero_images_are_refused(void **state)
{
    (void)state;
    uint16_t words[WORDS];
    uint8_t mac[6];
    memset(words, 0xff, sizeof(words)); /* an erased EEPROM */
    assert_int_equal(e1000e_eeprom_check(words, mac), E1000E_EEPROM_BAD_CHECKSUM);
    memset(words, 0, sizeof(words));
    assert_int_equal(e1000e_eeprom_check(words, mac), E1000E_EEPROM_BAD_CHECKSUM);
    /* a right checksum over a zero or all-ones address is still no address */
    const uint8_t zero[6] = {0}, ones[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    good_image(words, zero);
    assert_int_equal(e1000e_eeprom_check(words, mac), E1000E_EEPROM_NO_MAC);
    good_image(words, ones);
    assert_int_equal(e1000e_eeprom_check(words, mac), E1000E_EEPROM_NO_MAC);
}

static void test_multicast_address_is_refused(void **state)
{
    (void)state;
    const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
    uint16_t words[WORDS];
    good_image(words, group);
    uint8_t mac[6];
    assert_int_equal(e1000e_eeprom_check(words, mac), E1000E_EEPROM_NO_MAC);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_image_gives_its_mac),
        cmocka_unit_test(test_any_changed_word_breaks_the_checksum),
        cmocka_unit_test(test_blank_and_zero_images_are_refused),
        cmocka_unit_test(test_multicast_address_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
