#!/usr/bin/env bash
# build/deps.sh: check for, and as root install, the Debian packages Formica needs.
# Usage: build/deps.sh [--check]   (--check only reports; exit 1 if anything required is missing)
# Fast no-op when everything is present; not root: prints the apt-get command and exits 1.
# Also fetches the project-local QEMU 10 into build/out/qemu10/ (build/qemu10.sh).
set -euo pipefail

REQUIRED_PACKAGES=(
    build-essential gcc make binutils
    qemu-system-x86
    grub-common grub-pc-bin grub-efi-amd64-bin xorriso mtools
    ovmf e2fsprogs
    console-setup-linux
    libcmocka-dev
    python3 python3-pytest-xdist
    nbdkit
)
OPTIONAL_PACKAGES=(clang-format python3-matplotlib)

check_only=false
case "${1:-}" in
    "") ;;
    --check) check_only=true ;;
    -h | --help)
        sed -n '2,4p' "$0"
        exit 0
        ;;
    *)
        echo "build/deps.sh: unknown argument '$1' (use --check)" >&2
        exit 2
        ;;
esac

package_installed() {
    [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" = "installed" ]
}

pytest_works() {
    command -v python3 >/dev/null && python3 -m pytest --version >/dev/null 2>&1
}

missing_packages() {
    local package
    for package in "$@"; do
        package_installed "$package" || echo "$package"
    done
}

mapfile -t missing < <(missing_packages "${REQUIRED_PACKAGES[@]}")
mapfile -t missing_optional < <(missing_packages "${OPTIONAL_PACKAGES[@]}")
# matplotlib from pip (pyenv's python3) counts as present.
if python3 -c "import matplotlib" >/dev/null 2>&1; then
    still_missing=()
    for package in "${missing_optional[@]}"; do
        [ "$package" = python3-matplotlib ] || still_missing+=("$package")
    done
    missing_optional=("${still_missing[@]}")
fi
if ! pytest_works && ! package_installed python3-pytest; then
    missing+=(python3-pytest)
fi

if [ ${#missing_optional[@]} -gt 0 ]; then
    echo "build/deps.sh: optional, not installed: ${missing_optional[*]}"
fi

# make bench's plots need matplotlib in the python3 that runs them; that may be pyenv's
# (Debian's python3-matplotlib does not reach it), so fall back to pip.
if ! python3 -c "import matplotlib" >/dev/null 2>&1; then
    if $check_only; then
        echo "build/deps.sh: optional: python3 cannot import matplotlib (make bench draws no plots)"
    else
        echo "build/deps.sh: installing matplotlib with pip (make bench's plots)"
        python3 -m pip install --quiet matplotlib ||
            python3 -m pip install --quiet --break-system-packages matplotlib ||
            echo "build/deps.sh: could not install matplotlib; make bench will skip the plots"
    fi
fi
# make test runs the integration tests on two workers (pytest-xdist); without it they
# run one at a time and take about twice as long. Debian's python3-pytest-xdist does
# not reach another python3 (pyenv's), so pip installs it there.
# Called once the Debian packages are in.
ensure_xdist() {
    python3 -c "import xdist" >/dev/null 2>&1 && return 0
    echo "build/deps.sh: installing pytest-xdist with pip (make test's two workers)"
    python3 -m pip install --quiet pytest-xdist ||
        python3 -m pip install --quiet --break-system-packages pytest-xdist ||
        echo "build/deps.sh: could not install pytest-xdist; make test runs one test at a time"
}
# The project-local QEMU 10 (build/qemu10.sh): fetched unless --check; never fatal.
local_qemu() {
    if $check_only; then "$(dirname "$0")/qemu10.sh" --check; else "$(dirname "$0")/qemu10.sh"; fi
}

if [ ${#missing[@]} -eq 0 ] && pytest_works; then
    $check_only && echo "build/deps.sh: all required packages are installed"
    $check_only || ensure_xdist
    local_qemu
    exit 0
fi
if [ ${#missing[@]} -gt 0 ]; then
    echo "build/deps.sh: missing: ${missing[*]}"
fi
if $check_only; then
    pytest_works || echo "build/deps.sh: 'python3 -m pytest' does not work"
    exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "build/deps.sh: not root; run:"
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]} ${missing_optional[*]}"
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update
    apt-get install -y --no-install-recommends "${missing[@]}"
    if [ ${#missing_optional[@]} -gt 0 ]; then
        apt-get install -y --no-install-recommends "${missing_optional[@]}" ||
            echo "build/deps.sh: could not install optional ${missing_optional[*]}; continuing"
    fi
fi

# python3 may not be Debian's (pyenv, venv): then Debian's python3-pytest does not reach it.
if ! pytest_works; then
    echo "build/deps.sh: python3 -m pytest still fails; installing pytest with pip"
    python3 -m pip install --quiet pytest || python3 -m pip install --quiet --break-system-packages pytest
fi
pytest_works || { echo "build/deps.sh: pytest is still not usable" >&2; exit 1; }
ensure_xdist
local_qemu
echo "build/deps.sh: dependencies installed"
