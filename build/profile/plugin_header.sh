#!/usr/bin/env bash
# build/profile/plugin_header.sh QEMU: prints the folder holding the qemu-plugin.h
# of that QEMU's own version (the plugin API version must match what it loads).
# A QEMU built from source brings it (PREFIX/include, or its source tree); for
# Debian's qemu-system-x86 the header comes from the matching source package
# (apt-get source --download-only, through a private package list), cached in
# build/out/qemu-plugin-api/VERSION/.
set -euo pipefail
qemu=$(command -v "${1:-qemu-system-x86_64}")
version=$("$qemu" --version | sed -n '1s/.*version \([0-9][0-9.]*\).*/\1/p')
[ -n "$version" ] || { echo "plugin_header: cannot tell $qemu's version" >&2; exit 1; }
prefix=$(dirname "$(dirname "$(readlink -f "$qemu")")")
for candidate in "$prefix/include" "$prefix/../include/qemu" "$prefix/../../include/qemu"; do
    if [ -f "$candidate/qemu-plugin.h" ]; then
        readlink -f "$candidate"
        exit 0
    fi
done
here=$(cd "$(dirname "$0")/../.." && pwd)
cache="$here/build/out/qemu-plugin-api/$version"
if [ -f "$cache/qemu-plugin.h" ]; then
    echo "$cache"
    exit 0
fi
package=$(dpkg -S "$(readlink -f "$qemu")" 2>/dev/null | cut -d: -f1 || true)
if [ -z "$package" ]; then
    echo "plugin_header: $qemu (QEMU $version) brings no qemu-plugin.h and is no Debian package;" \
        "build QEMU from source with --enable-plugins and point FORMICA_QEMU at it" >&2
    exit 1
fi
source_version=$(dpkg-query -W -f='${source:Version}' "$package")
source_package=$(dpkg-query -W -f='${source:Package}' "$package")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/download"
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
cat >"$work/sources.list" <<SOURCES
deb-src http://deb.debian.org/debian $codename main
deb-src http://deb.debian.org/debian $codename-updates main
deb-src http://deb.debian.org/debian-security $codename-security main
SOURCES
apt_options=(-o "Dir::Etc::SourceList=$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$work/lists" -o APT::Sandbox::User=root)
echo "plugin_header: fetching $source_package $source_version's source for qemu-plugin.h" >&2
apt-get "${apt_options[@]}" -qq update >&2
(cd "$work/download" && apt-get "${apt_options[@]}" -qq source --download-only \
    "$source_package=$source_version" >&2)
mkdir -p "$cache"
tar -xf "$work"/download/*.orig.tar.* -C "$work" --wildcards '*/include/qemu/qemu-plugin.h'
cp "$work"/*/include/qemu/qemu-plugin.h "$cache/"
echo "$cache"
