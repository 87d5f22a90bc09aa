/* fw_cfg.c: QEMU fw_cfg through its I/O ports (selector 0x510, data 0x511).
 * The directory (key 0x19) lists files as big-endian size/key/name records. */
#include "fw_cfg.h"
#include "x86.h"
#include <stdint.h>
#include <string.h>

#define FW_CFG_SELECTOR 0x510
#define FW_CFG_DATA 0x511
#define FW_CFG_SIGNATURE 0x0000
#define FW_CFG_DIRECTORY 0x0019

static void read_bytes(void *buffer, size_t count)
{
    uint8_t *bytes = buffer;
    for (size_t i = 0; i < count; i++)
        bytes[i] = port_in8(FW_CFG_DATA);
}

static uint32_t big_endian_32(const uint8_t *bytes)
{
    return (uint32_t)bytes[0] << 24 | (uint32_t)bytes[1] << 16 | (uint32_t)bytes[2] << 8 | bytes[3];
}

bool fw_cfg_read_text(const char *name, char *buffer, size_t size)
{
    char signature[4];
    port_out16(FW_CFG_SELECTOR, FW_CFG_SIGNATURE);
    read_bytes(signature, 4);
    if (memcmp(signature, "QEMU", 4) != 0 || size == 0)
        return false;
    port_out16(FW_CFG_SELECTOR, FW_CFG_DIRECTORY);
    uint8_t count_bytes[4];
    read_bytes(count_bytes, 4);
    uint32_t count = big_endian_32(count_bytes);
    for (uint32_t i = 0; i < count; i++) {
        uint8_t entry[64];
        read_bytes(entry, sizeof(entry));
        if (strncmp((const char *)entry + 8, name, 56) != 0)
            continue;
        uint32_t file_size = big_endian_32(entry);
        uint16_t key = (uint16_t)(entry[4] << 8 | entry[5]);
        port_out16(FW_CFG_SELECTOR, key);
        size_t length = file_size < size - 1 ? file_size : size - 1;
        read_bytes(buffer, length);
        buffer[length] = '\0';
        return true;
    }
    return false;
}
