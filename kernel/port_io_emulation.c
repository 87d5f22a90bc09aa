/* port_io_emulation.c: a driver's in/out instructions done by the kernel.
 * Drivers run with IOPL 3 (mkernel/device_memory.c), so on a CPU their
 * in/out never fault. A hypervisor that runs user mode natively and keeps
 * the host's I/O privilege (Linux's kvm_pvm) turns each into a general-
 * protection fault instead; for a driver the kernel then decodes the
 * instruction, makes the access itself and steps over it. */
#include "port_io_emulation.h"
#include "cpu.h"
#include "device_state.h"
#include "user_memory.h"
#include "x86.h"

#define VECTOR_GENERAL_PROTECTION 13
#define PREFIX_OPERAND_SIZE 0x66
#define INSTRUCTION_BYTES_MAX 4 /* 66, a REX prefix, the opcode, its port byte */

/* One decoded in/out: its length, direction, width and port. */
struct port_access {
    uint32_t length;
    uint32_t width; /* 1, 2 or 4 bytes */
    bool out;
    uint16_t port;
};

static bool is_rex_prefix(uint8_t byte)
{
    return (byte & 0xf0) == 0x40;
}

/* E4-E7 take the port as an immediate byte, EC-EF from DX; an even opcode
 * moves a byte, an odd one a word or doubleword (66 chooses the word). */
static bool port_access_decode(const uint8_t *bytes, uint64_t dx, struct port_access *access)
{
    uint32_t at = 0;
    bool operand_16 = false;
    if (bytes[at] == PREFIX_OPERAND_SIZE) {
        operand_16 = true;
        at++;
    }
    if (is_rex_prefix(bytes[at]))
        at++;
    uint8_t opcode = bytes[at++];
    if ((opcode & 0xf4) != 0xe4)
        return false;
    bool immediate = (opcode & 0x08) == 0;
    access->out = (opcode & 0x02) != 0;
    access->width = (opcode & 0x01) == 0 ? 1 : operand_16 ? 2 : 4;
    access->port = immediate ? bytes[at++] : (uint16_t)dx;
    access->length = at;
    return true;
}

static void port_access_perform(const struct port_access *access, struct trap_frame *frame)
{
    uint64_t value = frame->rax;
    if (access->out) {
        if (access->width == 1)
            port_out8(access->port, (uint8_t)value);
        else if (access->width == 2)
            port_out16(access->port, (uint16_t)value);
        else
            port_out32(access->port, (uint32_t)value);
        return;
    }
    /* As the CPU does: in al/ax keeps the rest of rax, in eax zeroes its top half. */
    if (access->width == 1)
        frame->rax = (value & ~0xffull) | port_in8(access->port);
    else if (access->width == 2)
        frame->rax = (value & ~0xffffull) | port_in16(access->port);
    else
        frame->rax = port_in32(access->port);
}

bool port_io_emulate(struct trap_frame *frame)
{
    if (frame->vector != VECTOR_GENERAL_PROTECTION || frame->error_code != 0 ||
        !device_is_driver(this_cpu()->current))
        return false;
    uint8_t bytes[INSTRUCTION_BYTES_MAX] = {0};
    /* The instruction may end just before an unmapped page: fetch what is there. */
    uint32_t fetched = 0;
    while (fetched < INSTRUCTION_BYTES_MAX &&
           copy_from_user(&bytes[fetched], frame->rip + fetched, 1) == 0)
        fetched++;
    struct port_access access;
    if (fetched == 0 || !port_access_decode(bytes, frame->rdx, &access) || access.length > fetched)
        return false;
    port_access_perform(&access, frame);
    frame->rip += access.length;
    return true;
}
