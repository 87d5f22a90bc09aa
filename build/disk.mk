# disk.mk: the default disk images, made with e2fsprogs from build/disk/
# (included by the top Makefile): $(OUT)/disk.img (ext3: 4 KiB blocks, 64 MiB,
# a 4 MiB journal) and $(OUT)/disk-1k.img (ext2: 1 KiB blocks, 32 MiB), both
# errors=remount-ro (s_errors: FS goes read-only at the first inconsistency);
# `make disk-check` runs e2fsck -fn.

DISK_SOURCE := build/disk
DISK_FILES := $(shell find $(DISK_SOURCE) 2>/dev/null)
DISK_IMAGE := $(OUT)/disk.img
DISK_IMAGE_1K := $(OUT)/disk-1k.img
MKE2FS ?= mke2fs
E2FSCK ?= e2fsck

DEBUGFS ?= debugfs

# build/disk_image.py makes every image (these and those tests and benchmarks make): the files of
# build/disk belong to the console user (USER_CONSOLE:GROUP_USERS, read from formica/users.h: the
# shell's), whoever builds; the root directory to root, and it is world-writable and sticky (1777,
# like /tmp): every user can make files in `/`, and only a name's owner removes it
# (docs/authority.md).
DISK_IMAGE_TOOL := build/disk_image.py
DISK_IMAGE_INPUTS := $(DISK_FILES) build/disk.mk $(DISK_IMAGE_TOOL) lib/include/formica/users.h

# $(1): image, then build/disk_image.py's options.
define make_disk_image
	@echo "  MKE2FS  $(1)"
	@MKE2FS=$(MKE2FS) DEBUGFS=$(DEBUGFS) python3 $(DISK_IMAGE_TOOL) $(1) $(2)
endef

$(DISK_IMAGE): $(DISK_IMAGE_INPUTS)
	$(call make_disk_image,$@,--type ext3 --block-size 4096 --size 64M --journal-mib 4 --errors remount-ro)

$(DISK_IMAGE_1K): $(DISK_IMAGE_INPUTS)
	$(call make_disk_image,$@,--type ext2 --block-size 1024 --size 32M --errors remount-ro)

.PHONY: disk disk-check
disk: $(DISK_IMAGE) $(DISK_IMAGE_1K)

disk-check: $(DISK_IMAGE) $(DISK_IMAGE_1K)
	@for image in $^; do \
	    echo "  E2FSCK  $$image"; \
	    $(E2FSCK) -fn $$image || exit 1; \
	done
