# The kernel boundary (docs/architecture.md, "pkernel/"): the built p-kernel holds none of
# the m-kernel-only functions that moved to mkernel/, the m-kernel does, and
# build/check-pkernel-symbols passes on the build's image and fails, naming the symbol,
# against an allow-list that lacks one. No QEMU.
import os
import subprocess

import formica

CHECK = formica.REPO_ROOT / "build" / "check-pkernel-symbols"
ALLOW_LIST = formica.REPO_ROOT / "build" / "pkernel.symbols"
PKERNEL = formica.OUT_DIR / "pkernel.elf"
MKERNEL = formica.OUT_DIR / "mkernel.elf"
MKERNEL_ONLY = ["lapic_send_init", "lapic_send_startup", "clock_calibrate", "intercore_area_init",
                "console_init_screen", "selftest_intercore", "frame_allocate", "paging_init",
                "madt_parse", "elf_read"]
INLINED_IN_MKERNEL = ["ioapic_mask_all", "irq_release"]  # static beside their one caller now


def text_symbols(image):
    listing = subprocess.run(["nm", str(image)], check=True, capture_output=True, text=True).stdout
    return {fields[2] for fields in (line.split() for line in listing.splitlines())
            if len(fields) == 3 and fields[1] in ("t", "T")}


def check(allow_list):
    return subprocess.run([str(CHECK), str(PKERNEL)], capture_output=True, text=True,
                          env=dict(os.environ, PKERNEL_SYMBOLS=str(allow_list)))


def test_mkernel_only_code_is_not_in_the_pkernel(built):
    pkernel, mkernel = text_symbols(PKERNEL), text_symbols(MKERNEL)
    assert [name for name in MKERNEL_ONLY + INLINED_IN_MKERNEL if name in pkernel] == []
    assert [name for name in MKERNEL_ONLY if name not in mkernel] == []


def test_the_build_passes_its_allow_list(built):
    result = check(ALLOW_LIST)
    assert result.returncode == 0, result.stderr


def test_a_symbol_off_the_list_fails_the_check(built, tmp_path):
    shorter = tmp_path / "pkernel.symbols"
    lines = ALLOW_LIST.read_text().splitlines()
    assert "intercore_send" in lines
    shorter.write_text("\n".join(line for line in lines if line != "intercore_send") + "\n")
    result = check(shorter)
    assert result.returncode == 1
    assert "    intercore_send\n" in result.stderr and "make pkernel-symbols" in result.stderr
