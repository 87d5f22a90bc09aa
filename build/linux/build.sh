#!/usr/bin/env bash
# build/linux/build.sh: builds the Linux guest of the evaluation's Linux comparison
# (docs/evaluation.md) under build/out/linux/:
#   vmlinuz         Debian's kernel: the linux-image package linux-image-amd64 depends
#                   on, fetched with `apt-get download` and unpacked with `dpkg -x`
#   bonnie          apps/bonnie built as a static Linux program with the POSIX shim
#                   build/linux/bonnie_linux.c (+ build/linux/include/formica/)
#   sort, memseq    apps/sort and apps/memseq as static Linux programs with the shim
#                   build/linux/teramem_linux.c (the pager region is malloc'ed memory)
#   flashbench      apps/flashbench as a static Linux program (make bench-flash): its system
#                   part build/linux/flashbench_linux.c, lib/flmalloc*.c over
#                   build/linux/flmalloc_linux.c, Teramem on malloc
#   initramfs.cpio.gz  busybox-static, bonnie, sort, memseq, fileio, flashbench, the modules for ext2 on
#                   virtio-blk and zram, and build/linux/init (build/linux/make_initramfs.py)
#   ext2.img        an empty ext2 file system for the virtio disk (mke2fs)
# Downloads are cached in build/out/linux/debs/; a second run only rebuilds what changed.
# Usage: build/linux/build.sh            (everything)
#        build/linux/build.sh bonnie OUT (only the static Bonnie, to OUT; used by the tests)
#        build/linux/build.sh teramem DIR (only the static sort and memseq, into DIR)
#        build/linux/build.sh flashbench OUT (only the static flashbench, to OUT)
set -euo pipefail

REPO="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="$REPO/build/out/linux"
DEBS="$OUT/debs"
mkdir -p "$DEBS"

# The static Linux Bonnie: apps/bonnie unchanged, the shim's headers first, then
# Formica's own headers for what the shim does not replace (formica/size.h, and
# formica/errors.h: the error values are the real ones, never a copy).
bonnie_sources=("$REPO"/apps/bonnie/{main,options,seeker,server_cycles,child,sequential}.c "$REPO/lib/size_parse.c"
    "$REPO/build/linux/bonnie_linux.c" "$REPO/build/linux/file_linux.c")
build_bonnie() { # build_bonnie OUTPUT: compiles unless OUTPUT is newer than every source
    if [ ! -x "$1" ] || [ -n "$(find "${bonnie_sources[@]}" "$REPO/apps/bonnie" "$REPO/build/linux/include" \
            "$REPO/lib/include/formica/size.h" "$REPO/lib/include/formica/errors.h" "$REPO/protocol" -newer "$1" -print -quit)" ]; then
        echo "build/linux: cc -static bonnie"
        (cd "$REPO" && python3 build/protocol.py build/out/gen protocol/*.messages)
        gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static -I "$REPO/build/linux/include" \
            -I "$REPO/apps/bonnie" -idirafter "$REPO/lib/include" -idirafter "$REPO/build/out/gen" \
            -o "$1" "${bonnie_sources[@]}"
    fi
}
# The static Linux sort and memseq: apps/sort and apps/memseq unchanged, Teramem on
# malloc (build/linux/teramem_linux.c), the pure library files they share with Formica.
teramem_common=("$REPO"/lib/{progress,size_parse,teramem_options,json}.c
    "$REPO"/build/linux/{teramem_linux,user_linux}.c)
build_teramem_program() { # build_teramem_program OUTPUT SOURCES...: compiles unless OUTPUT is newest
    local output="$1"
    shift
    if [ ! -x "$output" ] || [ -n "$(find "$@" "${teramem_common[@]}" "$REPO/build/linux/include" \
            "$REPO/lib/include/formica" "$REPO/protocol" -newer "$output" -print -quit)" ]; then
        echo "build/linux: cc -static $(basename "$output")"
        (cd "$REPO" && python3 build/protocol.py build/out/gen protocol/*.messages)
        gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static -I "$REPO/build/linux/include" \
            -I "$REPO/apps/memseq" -idirafter "$REPO/lib/include" -idirafter "$REPO/build/out/gen" \
            -o "$output" "$@" "${teramem_common[@]}"
    fi
}
build_teramem_apps() { # build_teramem_apps DIR: DIR/sort and DIR/memseq
    mkdir -p "$1"
    build_teramem_program "$1/sort" "$REPO/apps/sort/main.c" "$REPO/apps/sort/external.c"
    build_teramem_program "$1/memseq" "$REPO/apps/memseq/main.c" "$REPO/build/linux/kernel_counts_linux.c"
}
# The static Linux fileio (apps/fileio, make bench-vems) and dm_writecache_setup (the
# device-mapper ioctls that put dm-writecache in front of the disk; busybox has no dmsetup).
build_vems_programs() { # build_vems_programs DIR
    local fileio_sources=("$REPO/apps/fileio/main.c" "$REPO/lib/size_parse.c"
        "$REPO/build/linux/user_linux.c" "$REPO/build/linux/file_linux.c")
    if [ ! -x "$1/fileio" ] || [ -n "$(find "${fileio_sources[@]}" "$REPO/build/linux/include" -newer "$1/fileio" -print -quit)" ]; then
        echo "build/linux: cc -static fileio"
        gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static -I "$REPO/build/linux/include" \
            -idirafter "$REPO/lib/include" -o "$1/fileio" "${fileio_sources[@]}"
    fi
    local setup="$REPO/build/linux/dm_writecache_setup.c"
    if [ ! -x "$1/dm_writecache_setup" ] || [ "$setup" -nt "$1/dm_writecache_setup" ]; then
        echo "build/linux: cc -static dm_writecache_setup"
        gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static -o "$1/dm_writecache_setup" "$setup"
    fi
}
# The static Linux flashbench (make bench-flash): apps/flashbench unchanged but for its system
# part (build/linux/flashbench_linux.c in place of apps/flashbench/system.c), libflmalloc's own
# lib/flmalloc*.c over build/linux/flmalloc_linux.c, Teramem on malloc for malloc-swap.
flashbench_sources=("$REPO"/apps/flashbench/{main,memory,mapped_file,fio,stream,himeno}.c
    "$REPO"/lib/{size_parse,stream_kernel,flmalloc,flmalloc_far,flmalloc_policy}.c
    "$REPO"/build/linux/{flashbench_linux,flmalloc_linux,teramem_linux,user_linux,file_linux}.c)
build_flashbench() { # build_flashbench OUTPUT: compiles unless OUTPUT is newer than every source
    if [ ! -x "$1" ] || [ -n "$(find "${flashbench_sources[@]}" "$REPO/apps/flashbench" "$REPO/build/linux/include" \
            "$REPO/lib/include/formica" "$REPO/lib/heap.h" "$REPO/lib/flmalloc_far.h" "$REPO/lib/flmalloc_policy.h" \
            "$REPO/protocol" -newer "$1" -print -quit)" ]; then
        echo "build/linux: cc -static flashbench"
        (cd "$REPO" && python3 build/protocol.py build/out/gen protocol/*.messages)
        gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static -I "$REPO/build/linux/include" \
            -I "$REPO/apps/flashbench" -idirafter "$REPO/lib/include" -idirafter "$REPO/build/out/gen" \
            -o "$1" "${flashbench_sources[@]}"
    fi
}
if [ "${1:-}" = flashbench ]; then # build/linux/build.sh flashbench OUTPUT: only flashbench
    build_flashbench "${2:?usage: build/linux/build.sh flashbench OUTPUT}"
    exit 0
fi
if [ "${1:-}" = teramem ]; then # build/linux/build.sh teramem DIR: only sort and memseq
    build_teramem_apps "${2:?usage: build/linux/build.sh teramem DIR}"
    exit 0
fi
if [ "${1:-}" = bonnie ]; then # build/linux/build.sh bonnie OUTPUT: only the static Bonnie
    build_bonnie "${2:?usage: build/linux/build.sh bonnie OUTPUT}"
    exit 0
fi

kernel_package_of_metapackage() { # the linux-image-VERSION package linux-image-amd64 depends on
    apt-cache depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -1
}
kernel_package="$(kernel_package_of_metapackage)"
if [ -z "$kernel_package" ] && [ "$(id -u)" = 0 ] && ! ls "$DEBS"/linux-image-*.deb >/dev/null 2>&1; then
    # A fresh machine (CI) without apt's package lists: fetch them once.
    echo "build/linux: apt-get update (no package lists for linux-image-amd64)"
    apt-get update -qq
    kernel_package="$(kernel_package_of_metapackage)"
fi
if [ -z "$kernel_package" ]; then
    # No apt metadata for linux-image-amd64 (no `apt-get update` yet): use a cached one.
    kernel_package="$(ls "$DEBS" 2>/dev/null | sed -n 's/^\(linux-image-[0-9][^_]*\)_.*\.deb$/\1/p' | head -1)"
fi
[ -n "$kernel_package" ] || { echo "build/linux: cannot find linux-image-amd64's kernel package (apt-get update?)" >&2; exit 1; }

fetch() { # fetch PACKAGE: apt-get download into $DEBS unless a .deb of it is there
    if ! ls "$DEBS/$1"_*.deb >/dev/null 2>&1; then
        echo "build/linux: apt-get download $1"
        (cd "$DEBS" && apt-get download "$1")
    fi
}
fetch "$kernel_package"
fetch busybox-static

kernel_deb="$(ls "$DEBS/$kernel_package"_*.deb | head -1)"
if [ ! -f "$OUT/vmlinuz" ] || [ "$kernel_deb" -nt "$OUT/vmlinuz" ]; then
    echo "build/linux: dpkg -x $(basename "$kernel_deb")"
    rm -rf "$OUT/kernel"
    dpkg -x "$kernel_deb" "$OUT/kernel"
    cp "$(ls "$OUT"/kernel/boot/vmlinuz-* | head -1)" "$OUT/vmlinuz"
    echo "$kernel_package $(basename "$kernel_deb")" >"$OUT/kernel-version"
fi
busybox_deb="$(ls "$DEBS"/busybox-static_*.deb | head -1)"
if [ ! -x "$OUT/busybox/bin/busybox" ] || [ "$busybox_deb" -nt "$OUT/busybox/bin/busybox" ]; then
    rm -rf "$OUT/busybox"
    dpkg -x "$busybox_deb" "$OUT/busybox"
fi

build_bonnie "$OUT/bonnie"
build_teramem_apps "$OUT"
build_vems_programs "$OUT"
build_flashbench "$OUT/flashbench"

python3 "$REPO/build/linux/make_initramfs.py" --kernel-tree "$OUT/kernel" \
    --busybox "$OUT/busybox/bin/busybox" --bonnie "$OUT/bonnie" \
    --init "$REPO/build/linux/init" --output "$OUT/initramfs.cpio.gz" \
    --program sort="$OUT/sort" --program memseq="$OUT/memseq" \
    --program fileio="$OUT/fileio" --program dm_writecache_setup="$OUT/dm_writecache_setup" \
    --program flashbench="$OUT/flashbench"

if [ ! -f "$OUT/ext2.img" ]; then
    mke2fs -q -t ext2 -b 4096 -F "$OUT/ext2.img" 64M
fi
echo "build/linux: guest ready in $OUT"
