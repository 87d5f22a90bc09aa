# user.mk: builds the user runtime (lib/ -> build/out/libformica.a), every user
# program (apps/, servers/, tests/programs/ -> build/out/bin/NAME) and the boot image
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

# Program name in the initrd : source folder. apps/ holds what a user runs
# (init, the shell, benchmarks, sort and memseq, the memory node); servers/
# the storage servers and the pager; tests/programs/ the programs the
# integration tests run (docs/architecture.md).
USER_PROGRAMS := init:apps/init shell:apps/shell hello:apps/hello pingpong:apps/pingpong
# The servers: each one's program line in protocol/*.messages (generated).
include $(GENERATED)/servers.mk
USER_PROGRAMS += $(SERVER_PROGRAMS)
# The ICA benchmark (apps/ipcbench, docs/ica.md; it starts tests/programs/ipcserver).
USER_PROGRAMS += ipcbench:apps/ipcbench
# Bonnie with readblock and readbyte (apps/bonnie, docs/bonnie.md).
USER_PROGRAMS += bonnie:apps/bonnie
# The memory node over virtio-net (apps/memnode, docs/memnode.md).
USER_PROGRAMS += memnode:apps/memnode
# STREAM's kernels as a memory node's own work, on its DRAM or local NVDIMM (apps/memstream,
# docs/memnode.md "Local work: memstream").
USER_PROGRAMS += memstream:apps/memstream
# Remote pager applications (apps/sort, apps/memseq, docs/pager.md).
USER_PROGRAMS += sort:apps/sort memseq:apps/memseq
# Seed 000's workloads over four kinds of memory (apps/flashbench, docs/files.md "flashbench").
USER_PROGRAMS += flashbench:apps/flashbench
# Seed 001's file access patterns, timed (apps/fileio, docs/storage.md: make bench-vems).
USER_PROGRAMS += fileio:apps/fileio
# Faults, preemption and kills (tests/programs/fault, tests/programs/spin, docs/userland.md).
USER_PROGRAMS += fault:tests/programs/fault spin:tests/programs/spin
# The kernel's paging calls with a tiny pager (tests/programs/pagertest, docs/pager.md).
USER_PROGRAMS += pagertest:tests/programs/pagertest
# ICA tests and their server (tests/programs/icatest, tests/programs/ipcserver, docs/ica.md).
USER_PROGRAMS += icatest:tests/programs/icatest ipcserver:tests/programs/ipcserver
# Metadata churn for the ext3 crash tests (tests/programs/churn, docs/journal.md).
USER_PROGRAMS += churn:tests/programs/churn
# Device access checks (tests/programs/devtest, docs/drivers.md).
USER_PROGRAMS += devtest:tests/programs/devtest
# Storage server checks (tests/programs/fstest, docs/storage.md).
USER_PROGRAMS += fstest:tests/programs/fstest
# mmap of files checked against pread (tests/programs/mmaptest, docs/mmap.md).
USER_PROGRAMS += mmaptest:tests/programs/mmaptest
# DK_READ from any core (tests/programs/dkread, docs/drivers.md: NVMe queue pairs per core).
USER_PROGRAMS += dkread:tests/programs/dkread
# BLK_READ through BLK's shards, and each shard's refusals (tests/programs/blkread, docs/storage.md).
USER_PROGRAMS += blkread:tests/programs/blkread
# The memory nodes' test client (tests/programs/memclient, docs/memnode.md).
USER_PROGRAMS += memclient:tests/programs/memclient
# The attacks on the authority model, each expected to be refused (tests/programs/hostile, docs/authority.md).
USER_PROGRAMS += hostile:tests/programs/hostile
# The attacks on the pager's sharing (tests/programs/hostilepager, docs/authority.md).
USER_PROGRAMS += hostilepager:tests/programs/hostilepager
# The system-call and ICA fuzzer (tests/programs/fuzz, docs/fuzzing.md).
USER_PROGRAMS += fuzz:tests/programs/fuzz
# A normal program's timed file calls, for the fair-sharing tests (tests/programs/fileloop).
USER_PROGRAMS += fileloop:tests/programs/fileloop
# Reads after writes across FS instances (tests/programs/replicatest, docs/storage.md).
USER_PROGRAMS += replicatest:tests/programs/replicatest
# The data-integrity exerciser of the file library (tests/programs/fileexerciser, docs/testing.md).
USER_PROGRAMS += fileexerciser:tests/programs/fileexerciser
# SYS_MEMORY_REPORT from a program (tests/programs/memreport, docs/userland.md).
USER_PROGRAMS += memreport:tests/programs/memreport
# libflmalloc's wrap (lib/flmalloc_wrap.c) at work in an unchanged program, and the same program
# unwrapped (tests/programs/flmwrap as flmwrap and flmplain; docs/files.md "libflmalloc"); its
# refusals and far path (tests/programs/flmtest).
USER_PROGRAMS += flmwrap:tests/programs/flmwrap flmplain:tests/programs/flmwrap
USER_PROGRAMS += flmtest:tests/programs/flmtest
# A program in seed 000's flm dialect (tests/programs/flmarray/main.flm, docs/files.md).
USER_PROGRAMS += flmarray:tests/programs/flmarray
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

# A source in seed 000's flm dialect (NAME.flm: arrays declared `flm TYPE NAME[N]...;`) is turned
# into C by build/flm_translate.py (docs/files.md, "The flm translator") beside its object, which
# is compiled like any other.
.PRECIOUS: $(OBJ)/user/%.flm.c
$(OBJ)/user/%.flm.c: %.flm build/flm_translate.py
	@mkdir -p $(dir $@)
	@echo "  FLM     $<"
	@python3 build/flm_translate.py $< $@
$(OBJ)/user/%.flm.o: $(OBJ)/user/%.flm.c build/user.mk
	@echo "  CC      $< (user)"
	@$(CC) $(USER_CFLAGS) -MMD -MP -c $< -o $@

$(USER_LIBRARY): $(call user_object_of,$(USER_LIBRARY_SOURCES))
	@echo "  AR      $@"
	@rm -f $@
	@$(USER_AR) rcs $@ $^

# The device libraries any program may link; only what a program calls is
# pulled in. lib/net/: the network cards (virtio-net, e1000e) and the memory-node client (the
# memory node, its client, the pager); lib/virtio/: the legacy virtio PCI
# interface both virtio drivers share and the virtio-blk driver (DK's disk, the
# pager's block-device backend). Their headers are in lib/include/formica/.
NET_LIBRARY := $(OUT)/libnet.a
$(NET_LIBRARY): $(call user_object_of,$(wildcard lib/net/*.c))
	@echo "  AR      $@"
	@rm -f $@
	@$(USER_AR) rcs $@ $^
VIRTIO_LIBRARY := $(OUT)/libvirtio.a
$(VIRTIO_LIBRARY): $(call user_object_of,$(wildcard lib/virtio/*.c))
	@echo "  AR      $@"
	@rm -f $@
	@$(USER_AR) rcs $@ $^
DEVICE_LIBRARIES := $(NET_LIBRARY) $(VIRTIO_LIBRARY)

# libflmalloc for unchanged programs (docs/files.md, "libflmalloc"), the static analogue of seed
# 000's LD_PRELOAD: a program named in FLMALLOC_PROGRAMS is linked with --wrap of malloc, calloc,
# realloc and free, so each of its allocations, the library's included, goes through flmalloc
# (lib/flmalloc_wrap.c). `make FLMALLOC=1` names every program of apps/ but init, the shell and
# flashbench (which chooses its memory itself); `make FLMALLOC_PROGRAMS="sort memseq"` names some.
# Servers never: FS and BLK cannot serve a file mapped by themselves. flmwrap, the wrap's test,
# always is.
FLMALLOC_APPLICATIONS := $(filter-out init shell flashbench,$(foreach program,$(USER_PROGRAMS),\
	$(if $(filter apps/%,$(word 2,$(subst :, ,$(program)))),$(word 1,$(subst :, ,$(program))))))
FLMALLOC_PROGRAMS ?= $(if $(filter 1,$(FLMALLOC)),$(FLMALLOC_APPLICATIONS))
FLMALLOC_LINKED := flmwrap $(FLMALLOC_PROGRAMS)
FLMALLOC_WRAP := --wrap=malloc --wrap=calloc --wrap=realloc --wrap=free
# The list is kept in a file rewritten only when it changes, so changing it relinks every program.
FLMALLOC_STAMP := $(OUT)/flmalloc-programs
FLMALLOC_STAMP_ERROR := $(shell mkdir -p $(OUT) && { [ "$$(cat $(FLMALLOC_STAMP) 2>/dev/null)" = \
	"$(sort $(FLMALLOC_LINKED))" ] || echo "$(sort $(FLMALLOC_LINKED))" > $(FLMALLOC_STAMP); } 2>&1)
ifneq ($(FLMALLOC_STAMP_ERROR),)
$(error $(FLMALLOC_STAMP_ERROR))
endif

# $(1): program name, $(2): its source folder.
define user_program_rule
$(OUT)/bin/$(1): build/user.ld $(call user_object_of,$(wildcard $(2)/*.c $(2)/*.S)) $(patsubst %.flm,$(OBJ)/user/%.flm.o,$(wildcard $(2)/*.flm)) $(USER_LIBRARY) $(DEVICE_LIBRARIES) $(FLMALLOC_STAMP)
	@mkdir -p $$(dir $$@)
	@echo "  LD      $$@$(if $(filter $(1),$(FLMALLOC_LINKED)), (FLMALLOC))"
	@$(LD) $(USER_LDFLAGS) $(if $(filter $(1),$(FLMALLOC_LINKED)),$(FLMALLOC_WRAP)) -o $$@ $$(filter %.o,$$^) $(DEVICE_LIBRARIES) $(USER_LIBRARY) $(USER_LIBGCC)
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
