#!/usr/bin/env bash
# build/qemu10.sh: fetches a project-local QEMU 10 (qemu-system-x86 from Debian
# bookworm-backports, with its own firmware data and SeaBIOS) into build/out/qemu10/,
# with `apt-get download` and `dpkg -x`, never touching the system's apt sources,
# package lists or installed packages. build/run prefers it (docs/runner.md).
#   build/out/qemu10/bin/qemu-system-x86_64   wrapper: the unpacked binary with its own
#                                             -L firmware dirs and module dir
#   build/out/qemu10/root/                    the unpacked packages
#   build/out/qemu10/apt/                     apt's own sources list, lists and cache
# Fast no-op when present. If backports cannot be reached it says so and exits 0:
# the system QEMU still works. Usage: build/qemu10.sh [--check]
set -uo pipefail

REPO="$(cd "$(dirname "$0")/.." && pwd)"
HOME_DIR="$REPO/build/out/qemu10"
WRAPPER="$HOME_DIR/bin/qemu-system-x86_64"
ROOT="$HOME_DIR/root"
APT_DIR="$HOME_DIR/apt"
DEBS="$HOME_DIR/debs"
# QEMU also tries the system's module directory, where the system QEMU's modules fail to
# load ("Only modules from the same build"): its own opengl and spice modules, which it
# loads at every start, come first in QEMU_MODULE_DIR.
PACKAGES=(qemu-system-x86 qemu-system-common qemu-system-data qemu-system-modules-opengl
    qemu-system-modules-spice seabios)
MIN_MAJOR=10
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
DEFAULT_MIRROR=http://deb.debian.org/debian

say() { echo "build/qemu10: $*"; }

# The major version the wrapper's QEMU reports, or nothing.
wrapper_major() {
    [ -x "$WRAPPER" ] || return 0
    "$WRAPPER" -version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p'
}

wrapper_runs() {
    local major
    major="$(wrapper_major)"
    [ -n "$major" ] && [ "$major" -ge "$MIN_MAJOR" ]
}

# Present: the wrapper runs QEMU >= MIN_MAJOR, unpacked from this script's package list.
present() {
    wrapper_runs && [ "$(cat "$HOME_DIR/packages" 2>/dev/null)" = "${PACKAGES[*]}" ]
}

if present; then
    [ "${1:-}" = --check ] && say "present: $("$WRAPPER" -version | head -1)"
    exit 0
fi
if [ "${1:-}" = --check ]; then
    say "not fetched (build/deps.sh fetches it); build/run uses the system QEMU"
    exit 0
fi

# The Debian mirror the system's own sources use (deb822 .sources or one-line .list).
system_mirror() {
    local files=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources)
    cat "${files[@]}" 2>/dev/null |
        grep -v '^[[:space:]]*#' |
        grep -oE '(https?|ftp)://[^[:space:]]+/debian/?([[:space:]]|$)' |
        head -1 | tr -d '[:space:]' | sed 's:/$::'
}

give_up() {
    say "$*"
    say "not fetched; build/run keeps using the system QEMU ($(command -v qemu-system-x86_64 || echo none))"
    exit 0
}

command -v apt-get >/dev/null && command -v dpkg >/dev/null || give_up "apt-get or dpkg missing (not Debian?)"
[ -f "$KEYRING" ] || give_up "$KEYRING missing (install debian-archive-keyring)"
mirror="${FORMICA_DEBIAN_MIRROR:-$(system_mirror)}" # the override is for testing
mirror="${mirror:-$DEFAULT_MIRROR}"

mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial" "$DEBS"
echo "deb [signed-by=$KEYRING] $mirror bookworm-backports main" >"$APT_DIR/sources.list"
# apt's own sources, lists and cache: an `apt-get update` with the default state
# directory would replace the system's package lists.
APT_OPTIONS=(-o "Dir::Etc::SourceList=$APT_DIR/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache"
    -o APT::Sandbox::User=root -o Acquire::Retries=1 -o Acquire::http::Timeout=20)

say "apt-get update of bookworm-backports from $mirror (own lists in $APT_DIR)"
if ! apt-get "${APT_OPTIONS[@]}" -qq update >"$APT_DIR/update.log" 2>&1 ||
    grep -qE '^(W|E): Failed' "$APT_DIR/update.log"; then
    give_up "cannot reach bookworm-backports at $mirror: $(grep -E '^(W|E):' "$APT_DIR/update.log" | head -1)"
fi
version="$(apt-cache "${APT_OPTIONS[@]}" show qemu-system-x86 2>/dev/null |
    sed -n 's/^Version: //p' | grep -E '^1:'"$MIN_MAJOR"'|^1:1[1-9]' | sort -V | tail -1)"
[ -n "$version" ] || give_up "bookworm-backports has no qemu-system-x86 $MIN_MAJOR or newer"

rm -f "$DEBS"/*.deb
for package in "${PACKAGES[@]}"; do
    candidate="$(apt-cache "${APT_OPTIONS[@]}" policy "$package" | sed -n 's/^ *Candidate: //p')"
    [ "$package" = seabios ] || candidate="$version"
    say "apt-get download $package=$candidate"
    (cd "$DEBS" && apt-get "${APT_OPTIONS[@]}" -qq download "$package=$candidate") ||
        give_up "apt-get download $package=$candidate failed"
done

rm -rf "$ROOT" "$WRAPPER" "$HOME_DIR/packages" # build/run must not pick a half-made one
for deb in "$DEBS"/*.deb; do
    dpkg -x "$deb" "$ROOT" || give_up "dpkg -x $(basename "$deb") failed"
done
binary="$ROOT/usr/bin/qemu-system-x86_64"
missing_libraries="$(ldd "$binary" 2>/dev/null | sed -n 's/^[[:space:]]*\([^ ]*\) => not found/\1/p' | tr '\n' ' ')"
[ -z "$missing_libraries" ] ||
    give_up "QEMU $version needs shared libraries this system lacks: $missing_libraries(apt-get install them, then rerun)"

# The binary looks for firmware in /usr/share/qemu and /usr/share/seabios, which hold the
# system QEMU's ROMs: -L puts the unpacked QEMU's own first (the system's ipxe-qemu, the
# same version, provides the NIC option ROMs). Its modules must be its own version too.
mkdir -p "$HOME_DIR/bin"
cat >"$WRAPPER" <<EOF
#!/bin/sh
# Project-local QEMU $version from bookworm-backports (made by build/qemu10.sh).
ROOT="\$(cd "\$(dirname "\$0")/../root" && pwd)"
QEMU_MODULE_DIR="\$ROOT/usr/lib/x86_64-linux-gnu/qemu" exec "\$ROOT/usr/bin/qemu-system-x86_64" \\
    -L "\$ROOT/usr/share/qemu" -L "\$ROOT/usr/share/seabios" -L /usr/lib/ipxe/qemu "\$@"
EOF
chmod +x "$WRAPPER"
if ! wrapper_runs; then
    problem="$("$WRAPPER" -version 2>&1 | head -2)"
    rm -f "$WRAPPER"
    give_up "the unpacked QEMU does not run: $problem"
fi
echo "$version" >"$HOME_DIR/version"
echo "${PACKAGES[*]}" >"$HOME_DIR/packages"
say "ready: $WRAPPER ($("$WRAPPER" -version | head -1))"
