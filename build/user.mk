# user.mk: builds the user runtime (lib/ -> build/out/libformica.a), every user
# program (apps/, servers/ -> build/out/bin/NAME) and the boot image
# build/out/initrd.tar that carries them. Included by the top-level Makefile.

USER_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-stack-protector \
	-fno-pic -fno-pie -static -nostdinc -isystem $(shell $(CC) -print-file-name=include) \
	-Ilib/include -I$(GENERATED)
USER_LDFLAGS := -nostdlib -static -z max-page-size=0x1000 -z noexecstack \
	--no-warn-rwx-segments -T build/user.ld -u _start
USER_AR := $(CROSS_COMPILE)ar
USER_LIBGCC := $(shell $(CC) -print-libgcc-file-name)

# User objects live under $(OBJ)/user/ so that lib/string.c and lib/format.c,
# which the kernels compile with kernel flags into $(OBJ)/lib/, do not collide.
user_object_of = $(patsubst %,$(OBJ)/user/%.o,$(basename $(1)))

# Everything in lib/ (string.c, format.c and errors.c are shared with the
# kernels, which compile their own copies with kernel flags).
USER_LIBRARY_SOURCES := $(wildcard lib/*.c lib/*.S)
USER_LIBRARY := $(OUT)/libformica.a

# Program name in the initrd : source folder.
USER_PROGRAMS := init:apps/init shell:apps/shell hello:apps/hello fault:apps/fault \
	pingpong:apps/pingpong ipcserver:apps/ipcserver spin:apps/spin \
	pagertest:apps/pagertest \
	fs:servers/fs blk:servers/blk dk:servers/disk pager:servers/pager
# ICA tests and benchmark (apps/icatest, apps/ipcbench, docs/ica.md).
USER_PROGRAMS += icatest:apps/icatest ipcbench:apps/ipcbench
# Metadata churn for the ext3 crash tests (apps/churn, docs/journal.md).
USER_PROGRAMS += churn:apps/churn
# Device access checks (apps/devtest, docs/drivers.md).
USER_PROGRAMS += devtest:apps/devtest
# Storage server checks (apps/fstest, docs/storage.md).
USER_PROGRAMS += fstest:apps/fstest
# DK_READ from any core (apps/dkread, docs/drivers.md: NVMe queue pairs per core).
USER_PROGRAMS += dkread:apps/dkread
# Bonnie with readblock and readbyte (apps/bonnie, docs/bonnie.md).
USER_PROGRAMS += bonnie:apps/bonnie
# Memory nodes and their test client over virtio-net (apps/memnode, apps/memclient, docs/memnode.md).
USER_PROGRAMS += memnode:apps/memnode memclient:apps/memclient
# Remote pager applications (apps/sort, apps/memseq, docs/pager.md).
USER_PROGRAMS += sort:apps/sort memseq:apps/memseq
# The attacks of issue 12, each expected to be refused (apps/hostile, docs/authority.md).
USER_PROGRAMS += hostile:apps/hostile
# A normal program's timed file calls, for the fair-sharing tests (apps/fileloop).
USER_PROGRAMS += fileloop:apps/fileloop
# The system-call and ICA fuzzer (apps/fuzz, docs/fuzzing.md).
USER_PROGRAMS += fuzz:apps/fuzz
program_name = $(word 1,$(subst :, ,$(1)))
program_folder = $(word 2,$(subst :, ,$(1)))
USER_BINARIES := $(foreach program,$(USER_PROGRAMS),$(OUT)/bin/$(call program_name,$(program)))

# Objects depend on this file too, so changed flags rebuild them.
$(OBJ)/user/%.o: %.c build/user.mk
	@mkdir -p $(dir $@)
	@echo "  CC      $< (user)"
	@$(CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@
$(OBJ)/user/%.o: %.S build/user.mk
	@mkdir -p $(dir $@)
	@echo "  CC      $< (user)"
	@$(CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@

$(USER_LIBRARY): $(call user_object_of,$(USER_LIBRARY_SOURCES))
	@echo "  AR      $@"
	@rm -f $@
	@$(USER_AR) rcs $@ $^

# The virtio-net driver and memory-node client (servers/net/) and the legacy
# virtio PCI interface that it and DK's virtio-blk share (servers/virtio/): a
# library any program may link (the memory node, its client, the pager, DK);
# only what a program calls is pulled in. DK's virtio-blk driver is in it too,
# for the pager's block-device backend (a second disk, e.g. an NBD export).
NET_LIBRARY := $(OUT)/libnet.a
$(NET_LIBRARY): $(call user_object_of,$(wildcard servers/net/*.c servers/virtio/*.c) servers/disk/virtio_blk.c)
	@echo "  AR      $@"
	@rm -f $@
	@$(USER_AR) rcs $@ $^

# $(1): program name, $(2): its source folder.
define user_program_rule
$(OUT)/bin/$(1): build/user.ld $(call user_object_of,$(wildcard $(2)/*.c $(2)/*.S)) $(USER_LIBRARY) $(NET_LIBRARY)
	@mkdir -p $$(dir $$@)
	@echo "  LD      $$@"
	@$(LD) $(USER_LDFLAGS) -o $$@ $$(filter %.o,$$^) $(NET_LIBRARY) $(USER_LIBRARY) $(USER_LIBGCC)
endef
$(foreach program,$(USER_PROGRAMS),$(eval $(call user_program_rule,$(call program_name,$(program)),$(call program_folder,$(program)))))

# The boot image: bin/<program> for every program and placements/<N>.conf from
# build/placements/ (when that folder exists). The folder itself is a
# prerequisite so that adding or removing a file there rebuilds the image.
PLACEMENT_FILES := $(wildcard build/placements/*.conf)
INITRD_STAGING := $(OUT)/initrd

$(OUT)/initrd.tar: $(USER_BINARIES) $(PLACEMENT_FILES) $(wildcard build/placements)
	@echo "  TAR     $@"
	@rm -rf $(INITRD_STAGING) && mkdir -p $(INITRD_STAGING)/bin $(INITRD_STAGING)/placements
	@cp $(USER_BINARIES) $(INITRD_STAGING)/bin/
	@$(if $(PLACEMENT_FILES),cp $(PLACEMENT_FILES) $(INITRD_STAGING)/placements/)
	@tar --format=ustar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 \
		-cf $@ -C $(INITRD_STAGING) bin placements

.PHONY: user
user: $(OUT)/initrd.tar
