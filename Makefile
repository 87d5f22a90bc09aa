# Makefile: builds Formica's two kernel images and the GRUB ISO into
# build/out/, and runs, tests and debugs them. `make help` lists the targets.

CROSS_COMPILE ?=
CC := $(CROSS_COMPILE)gcc
LD := $(CROSS_COMPILE)ld
NM := $(CROSS_COMPILE)nm
OUT := build/out
OBJ := $(OUT)/obj

KERNEL_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-stack-protector \
	-fno-pic -fno-pie -mno-red-zone -mcmodel=kernel -mgeneral-regs-only \
	-fno-asynchronous-unwind-tables -fno-omit-frame-pointer \
	-nostdinc -isystem $(shell $(CC) -print-file-name=include) -Ilib/include -Ikernel
KERNEL_LDFLAGS := -nostdlib -z max-page-size=0x1000 -z noexecstack --no-warn-rwx-segments

# Code both kernels link, and each kernel's own code.
COMMON_SOURCES := $(wildcard kernel/*.c kernel/*.S) lib/string.c lib/format.c lib/errors.c
MKERNEL_SOURCES := $(wildcard mkernel/*.c mkernel/*.S)
PKERNEL_SOURCES := $(wildcard pkernel/*.c pkernel/*.S)

object_of = $(patsubst %,$(OBJ)/%.o,$(basename $(1)))
COMMON_OBJECTS := $(call object_of,$(COMMON_SOURCES))
MKERNEL_OBJECTS := $(call object_of,$(MKERNEL_SOURCES))
PKERNEL_OBJECTS := $(call object_of,$(PKERNEL_SOURCES))

.PHONY: format format-check all run shell test unit-test integration-test debug clean deps help
all: $(OUT)/mkernel.elf $(OUT)/pkernel.elf $(OUT)/initrd.tar $(OUT)/formica.iso

# User programs, servers and the boot image of them (build/out/initrd.tar).
include build/user.mk
include build/disk.mk
# The ext2 disk image every boot attaches by default (build/out/disk.img).
all: $(DISK_IMAGE) $(DISK_IMAGE_1K)
-include build/bench.mk
include build/profile.mk

# m-kernel sources may include mkernel/ headers; the p-kernel's may not.
$(OBJ)/mkernel/%.o: mkernel/%.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KERNEL_CFLAGS) -Imkernel -MMD -MP -c $< -o $@
$(OBJ)/mkernel/%.o: mkernel/%.S
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KERNEL_CFLAGS) -Imkernel -MMD -MP -c $< -o $@
$(OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KERNEL_CFLAGS) -MMD -MP -c $< -o $@
$(OBJ)/%.o: %.S
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(KERNEL_CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/mkernel.elf: build/mkernel.ld $(MKERNEL_OBJECTS) $(COMMON_OBJECTS)
	@echo "  LD      $@"
	@$(LD) $(KERNEL_LDFLAGS) -T build/mkernel.ld -o $@ $(MKERNEL_OBJECTS) $(COMMON_OBJECTS)

$(OUT)/pkernel.elf: build/pkernel.ld $(PKERNEL_OBJECTS) $(COMMON_OBJECTS)
	@echo "  LD      $@"
	@$(LD) $(KERNEL_LDFLAGS) -T build/pkernel.ld -o $@ $(PKERNEL_OBJECTS) $(COMMON_OBJECTS)
	@if $(NM) $@ | grep -Eq ' [tT] (frame_|physical_|paging_|madt_|elf_)'; then \
		echo "error: the p-kernel image contains memory-management code" >&2; rm -f $@; exit 1; fi

$(OUT)/formica.iso: $(OUT)/mkernel.elf $(OUT)/pkernel.elf $(OUT)/initrd.tar build/grub.cfg
	@rm -rf $(OUT)/iso && mkdir -p $(OUT)/iso/boot/grub
	cp $(OUT)/mkernel.elf $(OUT)/pkernel.elf $(OUT)/initrd.tar $(OUT)/iso/boot/
	cp build/grub.cfg $(OUT)/iso/boot/grub/grub.cfg
	grub-mkrescue -o $@ $(OUT)/iso 2> $(OUT)/grub-mkrescue.log || \
		{ cat $(OUT)/grub-mkrescue.log >&2; exit 1; }

deps:
	@build/deps.sh

# The demo: 4 cores, the inter-core self-test, servers placed by preset 5, a
# program on every core, a cross-core ping-pong, then Bonnie with readblock
# and readbyte on the ext2 disk (build/out/disk.img); then power off.
DEMO_COMMANDS := cores; placement; ps; run hello @1; run hello @2; run hello @3; \
	run pingpong 200 0 1; run bonnie -p 2 -m readblock; run bonnie -p 2 -m readbyte; ls /
run: deps all
	build/run --smp 4 --placement 5 --append "selftest=intercore" --cmd "$(DEMO_COMMANDS)" --timeout 300

# An interactive shell on the serial console (type `help`; `halt` powers off).
shell: deps all
	build/run --smp 4 --placement 5 --timeout 86400

test: deps all unit-test integration-test

unit-test:
	$(MAKE) -C tests/unit

integration-test: all
	tests/integration/run

# QEMU waits for gdb on port 1234; see docs/debugging.md.
debug: deps all
	@echo "in another terminal: gdb -x build/gdbinit"
	build/run --smp 2 --qemu "-s -S" --timeout 3600

clean:
	rm -rf $(OUT)

# The project's C style (.clang-format): `make format` rewrites, `make format-check` reports.
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' | grep -v '^tests/unit/fixtures/')
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

help:
	@echo "make            build build/out/{mkernel.elf,pkernel.elf,formica.iso}"
	@echo "make run        install what is missing, boot the demo in QEMU"
	@echo "make shell      boot into the interactive shell (serial console)"
	@echo "make test       host unit tests and QEMU integration tests"
	@echo "make debug      boot with QEMU's gdb stub waiting on :1234"
	@echo "make clean      remove build/out"
	@echo "make format     format the C sources with .clang-format (format-check: report only)"

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
