# Makefile: builds Formica's two kernel images and the GRUB ISO into
# build/out/, and runs, tests and debugs them. `make help` lists the targets.

CROSS_COMPILE ?=
CC := $(CROSS_COMPILE)gcc
LD := $(CROSS_COMPILE)ld
NM := $(CROSS_COMPILE)nm
OUT := build/out
OBJ := $(OUT)/obj

# Every message is declared once in protocol/*.messages; build/protocol.py turns
# the declarations into headers under build/out/gen/formica/protocol/. It runs
# whenever make reads this file and rewrites only headers whose text changed.
GENERATED := $(OUT)/gen
PROTOCOL_DECLARATIONS := $(sort $(wildcard protocol/*.messages))
PROTOCOL_ERROR := $(shell python3 build/protocol.py $(GENERATED) $(PROTOCOL_DECLARATIONS) 2>&1)
ifneq ($(PROTOCOL_ERROR),)
$(error $(PROTOCOL_ERROR))
endif
# The framebuffer console's font: a PSF font of Debian's console-setup-linux turned
# into build/out/gen/formica/console_font.h the same way (build/console_font.py).
CONSOLE_FONT_ERROR := $(shell python3 build/console_font.py $(GENERATED)/formica/console_font.h 2>&1)
ifneq ($(CONSOLE_FONT_ERROR),)
$(error $(CONSOLE_FONT_ERROR))
endif

KERNEL_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-stack-protector \
	-ffunction-sections -fdata-sections \
	-fno-pic -fno-pie -mno-red-zone -mcmodel=kernel -mgeneral-regs-only \
	-fno-asynchronous-unwind-tables -fomit-frame-pointer \
	-nostdinc -isystem $(shell $(CC) -print-file-name=include) -Ilib/include -I$(GENERATED) \
	-Ikernel -DFORMICA_KERNEL
KERNEL_LDFLAGS := -nostdlib -z max-page-size=0x1000 -z noexecstack --no-warn-rwx-segments

# Code both kernels link, and each kernel's own code.
COMMON_SOURCES := $(wildcard kernel/*.c kernel/*.S kernel/ica/*.c) lib/string.c lib/format.c lib/errors.c lib/log_limit.c
# lib/nfit.c: the NFIT parser, shared with the pager; lib/keyboard_map.c: the US layout, shared
# with the USB keyboard driver (servers/usb/).
MKERNEL_SOURCES := $(wildcard mkernel/*.c mkernel/*.S) lib/nfit.c lib/keyboard_map.c
PKERNEL_SOURCES := $(wildcard pkernel/*.c pkernel/*.S)

object_of = $(patsubst %,$(OBJ)/%.o,$(basename $(1)))
COMMON_OBJECTS := $(call object_of,$(COMMON_SOURCES))
MKERNEL_OBJECTS := $(call object_of,$(MKERNEL_SOURCES))
PKERNEL_OBJECTS := $(call object_of,$(PKERNEL_SOURCES))

.PHONY: format format-check all run shell test unit-test integration-test test-many-cores debug clean deps help \
	docs-protocol protocol-check docs-check layer-check linux-guest pkernel-symbols crash-sweep fuzz-soak fuzz-images test-slow soak
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

# --gc-sections keeps only what the p-kernel reaches from its entry; the
# allow-list (build/pkernel.symbols) is its boundary: a new text symbol fails
# the build until the list is updated on purpose (`make pkernel-symbols`).
$(OUT)/pkernel.elf: build/pkernel.ld build/pkernel.symbols $(PKERNEL_OBJECTS) $(COMMON_OBJECTS)
	@echo "  LD      $@"
	@$(LD) $(KERNEL_LDFLAGS) --gc-sections -T build/pkernel.ld -o $@ $(PKERNEL_OBJECTS) $(COMMON_OBJECTS)
	@NM=$(NM) build/check-pkernel-symbols $@ $(if $(PKERNEL_SYMBOLS_UPDATE),--update) || { rm -f $@; exit 1; }

pkernel-symbols:
	@rm -f $(OUT)/pkernel.elf
	@$(MAKE) --no-print-directory PKERNEL_SYMBOLS_UPDATE=1 $(OUT)/pkernel.elf

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
# and readbyte on a fresh copy of the ext3 disk (build/out/demo-disk.img, so
# build/out/disk.img, which the tests copy, stays as built); then power off.
DEMO_COMMANDS := cores; placement; ps; run hello @1; run hello @2; run hello @3; \
	run pingpong 200 0 1; run bonnie -p 2 -m readblock; run bonnie -p 2 -m readbyte; ls /
run: deps all
	cp $(DISK_IMAGE) $(OUT)/demo-disk.img
	build/run --smp 4 --placement 5 --append "selftest=intercore" --disk $(OUT)/demo-disk.img \
	    --cmd "$(DEMO_COMMANDS)" --timeout 300

# An interactive shell on the serial console (type `help`; `halt` powers off), on
# the user's own disk build/out/shell-disk.img: a copy of the built disk made once,
# kept across shells (delete it to start again).
shell: deps all
	[ -f $(OUT)/shell-disk.img ] || cp $(DISK_IMAGE) $(OUT)/shell-disk.img
	build/run --smp 4 --placement 5 --disk $(OUT)/shell-disk.img --timeout 86400

test: deps all linux-guest protocol-check unit-test docs-check layer-check integration-test

# The Linux guest (build/out/linux/: Debian's kernel, busybox, a static Bonnie) that
# test_journal_linux exchanges an ext3 image with; a no-op when it is up to date.
linux-guest:
	build/linux/build.sh

# docs/protocol.md is generated from protocol/*.messages; protocol-check tests the
# generator and fails when that page is stale.
docs-protocol:
	python3 build/protocol.py --docs docs/protocol.md $(PROTOCOL_DECLARATIONS)
protocol-check:
	python3 -m pytest -q -p no:cacheprovider tests/unit/test_protocol.py

# Every source file is named in docs/architecture.md (build/check-docs-index).
docs-check:
	build/check-docs-index

# kernel/ica/'s files depend on each other in the order of kernel/ica/layers
# only, and the rest of the kernel enters it only where that file says
# (build/check-ica-layers, on the built objects); the kernel's call graph has
# no circle but the inherent ones of build/kernel-circles (build/check-kernel-circles).
layer-check: all
	NM=$(NM) build/check-ica-layers
	NM=$(NM) build/check-kernel-circles

unit-test:
	$(MAKE) -C tests/unit

integration-test: all
	tests/integration/run

# Corrupted disk images (docs/fuzzing.md): FUZZ_IMAGES boots on randomly damaged copies
# of the ext3 image, seeds FUZZ_IMAGES_SEED onwards; each must finish its shell commands
# and leave no damage e2fsck did not see before.
FUZZ_IMAGES ?= 300
FUZZ_IMAGES_SEED ?= 1
fuzz-images: all
	FORMICA_FUZZ_IMAGES=$(FUZZ_IMAGES) FORMICA_FUZZ_IMAGES_SEED=$(FUZZ_IMAGES_SEED) \
	    tests/integration/run -p no:xdist -s -k test_random_corrupt_images

# The fuzzer's soak (docs/fuzzing.md): test_fuzz with 1,000,000 calls instead of 100,000.
fuzz-soak: all
	FORMICA_FUZZ_CALLS=1000000 tests/integration/run -p no:xdist -k test_fuzzer_finds_no_panic_hang_or_leak

# The file exerciser's soak (docs/testing.md, "The file exerciser"): every configuration of
# test_file_exerciser (one FS, placement 9's replica, kills and crashes) with SOAK_OPERATIONS
# operations per run instead of a few thousand, the disruptions once per 10,000.
SOAK_OPERATIONS ?= 50000
soak: all
	FORMICA_EXERCISER_OPERATIONS=$(SOAK_OPERATIONS) tests/integration/run -p no:xdist -k test_file_exerciser

# The 255- and 256-core boots and self-tests (several minutes under TCG on 2 host cores).
test-many-cores: deps all
	tests/integration/run -m many_cores -p no:xdist

# The long ext3 crash sweep (docs/journal.md): QEMU killed at 24 points during churn.
crash-sweep: all
	FORMICA_CRASH_SWEEP=1 tests/integration/run -k test_crash_during_churn
# The long runs (pytest marker "slow"): sort at 40,000 records three times on a loaded host.
test-slow: deps all
	FORMICA_SLOW_TESTS=1 tests/integration/run -m slow

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
	@echo "make test       host unit tests, the docs index check and QEMU integration tests"
	@echo "make docs-check fail when a source file is missing from docs/architecture.md, or a doc names"
	@echo "                a function, file, operation or make target that does not exist"
	@echo "make linux-guest  build the Linux guest (build/linux/build.sh) test_journal_linux needs"
	@echo "make fuzz-soak  the system-call and ICA fuzzer with 1,000,000 calls (docs/fuzzing.md)"
	@echo "make fuzz-images  300 boots on randomly corrupted ext3 images (docs/fuzzing.md)"
	@echo "make soak       the file exerciser, 50,000 operations per configuration (docs/testing.md)"
	@echo "make pkernel-symbols  rewrite build/pkernel.symbols, the p-kernel's allow-list (review the diff)"
	@echo "make crash-sweep  ext3: QEMU killed at 24 points during churn (slow)"
	@echo "make test-slow  the long integration runs (pytest marker slow)"
	@echo "make test-many-cores  more many-core boots and self-tests (slow)"
	@echo "make debug      boot with QEMU's gdb stub waiting on :1234"
	@echo "make clean      remove build/out"
	@echo "make format     format the C sources with .clang-format (format-check: report only)"

-include $(shell find $(OBJ) -name '*.d' 2>/dev/null)
