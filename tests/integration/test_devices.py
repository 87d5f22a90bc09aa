# Device access rules (system calls 30-37, docs/drivers.md): a process without
# the driver flag is refused everything; a driver gets -E_INVALID for bad PCI
# addresses, RAM and the interrupt controllers; DMA memory is zeroed and bounded;
# SYS_ICA_DEVICE_BLOCK takes only pages of the driver's persistent-memory mappings.
import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 90
E_PERMISSION = -8


def run_commands(commands, *flags):
    return formica.run("--smp", "2", "--accel", "tcg", *flags, "--cmd", commands, timeout=TIMEOUT)


def checks_by_name(run):
    return {check["check"]: check for check in run.kinds("devtest")}


def test_ordinary_process_is_refused_every_device_call():
    run = run_commands("run devtest refused")
    assert run.rc == 0, run.describe()
    checks = checks_by_name(run)
    for name in ["pci_read", "pci_write", "device_map", "dma_allocate", "irq_attach", "irq_wait",
                 "irq_wait_timeout", "irq_attach_msi", "spawn_driver", "device_block"]:
        assert checks[name]["result"] == E_PERMISSION, run.describe()


def test_driver_gets_invalid_for_bad_addresses_and_ram():
    run = run_commands("run --driver devtest rules")
    assert run.rc == 0, run.describe()
    checks = checks_by_name(run)
    assert len(checks) >= 20, run.describe()
    assert all(check["ok"] for check in checks.values()), run.describe()
    for name in ["pci_bus_256", "pci_device_32", "pci_width_3", "map_ram_1mib", "map_lapic",
                 "msi_bus_256", "msi_no_function", "msi_second", "irq_after_msi",
                 "device_block_ram", "device_block_vga", "device_block_unaligned"]:
        assert checks[name]["result"] == -1, run.describe()
    # an MSI that never fires: the wait with a timeout gives up with 0
    assert checks["msi_host_bridge"]["result"] == 0, run.describe()
    assert checks["msi_wait_times_out"]["result"] == 0, run.describe()


def test_driver_rules_hold_on_a_pkernel_core():
    run = run_commands("run --driver devtest rules @1")
    assert run.rc == 0, run.describe()
    assert all(check["ok"] for check in run.kinds("devtest")), run.describe()


def test_dma_memory_is_returned_when_a_driver_ends():
    # 8 MiB of DMA per run, 12 runs: more than a small machine could leak.
    commands = "; ".join(["run --driver devtest rules"] * 12)
    run = run_commands(commands, "--mem", "64M")
    assert run.rc == 0, run.describe()
    assert "refused to free" not in run.text, run.describe()


def test_device_block_icas_are_pages_of_the_drivers_persistent_memory(tmp_path):
    # nvm=spare: the pager leaves the NVDIMM alone, devtest maps two of its pages.
    # Run twice: the first exits holding a device block, whose page must not
    # reach the frame allocator (it would say "refused to free").
    run = run_commands("run --driver devtest nvm; run --driver devtest nvm", "--nvm",
                       f"{tmp_path}/spare.nvm:16M", "--append", "nvm=spare")
    assert run.rc == 0, run.describe()
    checks = run.kinds("devtest")
    assert len(checks) == 2 * 13, run.describe()
    assert all(check["ok"] for check in checks), run.describe()
    by_name = checks_by_name(run)
    for name in ["device_block_unmapped", "device_block_nvm_unaligned",
                 "device_block_past_mapping", "device_block_past_nvm"]:
        assert by_name[name]["result"] == -1, run.describe()
    assert "refused: not page-aligned" in run.text, run.describe()
    assert "refused: not persistent memory" in run.text, run.describe()
    assert "refused: not in its persistent-memory mappings" in run.text, run.describe()
    assert "refused to free" not in run.text, run.describe()
