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

# The files of build/disk belong to the console user (USER_CONSOLE:GROUP_USERS, read
# from formica/users.h: the shell's), whoever builds; the root directory to root, and
# it is world-writable and sticky (1777, like /tmp): every user can make files
# in `/`, and only a name's owner removes it (docs/authority.md).
DISK_OWNER := $(shell sed -n 's/^\#define USER_CONSOLE \([0-9]*\).*/\1/p' lib/include/formica/users.h)
DISK_GROUP := $(shell sed -n 's/^\#define GROUP_USERS \([0-9]*\).*/\1/p' lib/include/formica/users.h)
DISK_OWNER_COMMANDS := $(OUT)/disk-owners.debugfs

$(DISK_OWNER_COMMANDS): $(DISK_FILES) build/disk.mk lib/include/formica/users.h
	@mkdir -p $(dir $@)
	@echo "set_inode_field / mode 041777" > $@
	@cd $(DISK_SOURCE) && find . -mindepth 1 | sed 's|^\.||' | while read -r path; do \
	    echo "set_inode_field $$path uid $(DISK_OWNER)"; echo "set_inode_field $$path gid $(DISK_GROUP)"; \
	done >> $(abspath $@)

# $(1): image, $(2): block size, $(3): size, $(4): ext2 or ext3 (and its options).
define make_disk_image
	@mkdir -p $(dir $(1))
	@echo "  MKE2FS  $(1)"
	@rm -f $(1)
	@$(MKE2FS) -q -F -t $(4) -r 1 -b $(2) -L formica -E root_owner=0:0 -d $(DISK_SOURCE) $(1) $(3) >/dev/null
	@$(DEBUGFS) -w -f $(DISK_OWNER_COMMANDS) $(1) >/dev/null 2>&1
endef

$(DISK_IMAGE): $(DISK_FILES) build/disk.mk $(DISK_OWNER_COMMANDS)
	$(call make_disk_image,$@,4096,64M,ext3 -J size=4 -e remount-ro)

$(DISK_IMAGE_1K): $(DISK_FILES) build/disk.mk $(DISK_OWNER_COMMANDS)
	$(call make_disk_image,$@,1024,32M,ext2 -e remount-ro)

.PHONY: disk disk-check
disk: $(DISK_IMAGE) $(DISK_IMAGE_1K)

disk-check: $(DISK_IMAGE) $(DISK_IMAGE_1K)
	@for image in $^; do \
	    echo "  E2FSCK  $$image"; \
	    $(E2FSCK) -fn $$image || exit 1; \
	done
