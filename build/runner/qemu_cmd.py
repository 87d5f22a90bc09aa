# Turns validated Options into the kernel command line and the QEMU argument vector.
# The kernel command line goes to QEMU fw_cfg (opt/formica/cmdline) in every boot mode,
# and also to -append for --boot kernel.
import os
import sys
import urllib.parse

from . import console

FW_CFG_CMDLINE = "opt/formica/cmdline"
FW_CFG_PLACEMENT = "opt/formica/placement"
OVMF_CODE_VARS_PAIRS = [
    ("/usr/share/OVMF/OVMF_CODE_4M.fd", "/usr/share/OVMF/OVMF_VARS_4M.fd"),
    ("/usr/share/OVMF/OVMF_CODE.fd", "/usr/share/OVMF/OVMF_VARS.fd"),
]
OVMF_SINGLE_IMAGE = "/usr/share/qemu/OVMF.fd"


class MissingFile(Exception):
    """A build output or firmware file that the requested boot needs is absent."""


def encode_option_value(text):
    """Percent-encode a kernel option value: only RFC 3986 unreserved chars and '/' stay."""
    return urllib.parse.quote(text, safe="/")


def interactive(options):
    """The shell reads the console when no --cmd is given and someone can type: on the
    terminal (stdin), with --keys or on a display (console.someone_types)."""
    return options.cmd is None and (sys.stdin.isatty() or console.someone_types(options.console))


def kernel_cmdline(options):
    words = []
    if options.placement:
        words.append("placement=" + options.placement)
    if options.cmd:
        words.append("cmd=" + encode_option_value(options.cmd))
    elif not interactive(options):
        words.append("cmd=")  # nobody to type: boot, run no command, power off
    roles = [role for role, _ in nvdimms(options)]
    if roles and roles != ["pager"]:
        words.append("nvm=" + ",".join(roles))
    if getattr(options, "memnodes", 0) and getattr(options, "memnode_cluster", ""):
        words.append("memnode_cluster=" + options.memnode_cluster)
    if getattr(options, "memnode_part", ""):
        words.append("memnode_part=" + options.memnode_part)
    if getattr(options, "memnodes", 0) and getattr(options, "memnode_ivshmem", False):
        words.append("memnode_ivshmem=on")
    if options.accel_kernel_options:
        words.append(options.accel_kernel_options)
    if options.append:
        words.append(options.append)
    return " ".join(words)


def qemu_option_value(text):
    """Escape a value inside a QEMU 'key=value,...' option: ',' becomes ',,'."""
    return text.replace(",", ",,")


def default_cpu(accel):
    return "host" if accel == "kvm" else "max"


def machine_argv(options, accel, qemu="qemu-system-x86_64"):
    """The machine every guest of the project runs on (Formica's and the Linux
    guest of build/linux): QEMU, machine, accelerator, CPU model, cores, memory,
    the serial console on stdio, no display, no reboot."""
    machine = options.machine + (",nvdimm=on" if nvdimms(options) else "")
    cpu = options.cpu or default_cpu(accel)
    if options.x2apic:
        cpu += ",+x2apic,enforce"
    argv = [qemu, "-machine", machine, "-accel", accel, "-cpu", cpu]
    argv += ["-smp", _smp_value(options)]
    argv += ["-m", _memory_value(options)]
    argv += ["-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot"]
    return argv


def icount_argv(options):
    """Instruction-counted guest time (--icount): deterministic costs."""
    return ["-icount", "shift=0,align=off,sleep=off"] if options.icount else []


def build_argv(options, accel, paths, qemu="qemu-system-x86_64", check_files=True):
    """The full QEMU argv. paths: dict with mkernel, pkernel, iso (checked unless told not to)."""
    cmdline = kernel_cmdline(options)
    argv = machine_argv(options, accel, qemu)
    argv += ["-device", "isa-debug-exit,iobase=0xf4,iosize=4"]
    argv += _boot_args(options.boot, dict(paths, usb=options.usb_image or paths["iso"]), cmdline,
                       check_files)
    if cmdline:
        argv += ["-fw_cfg", f"name={FW_CFG_CMDLINE},string={qemu_option_value(cmdline)}"]
    if options.placement_file:
        argv += ["-fw_cfg", f"name={FW_CFG_PLACEMENT},file={qemu_option_value(options.placement_file)}"]
    if options.disk:
        argv += disk_argv(options.disk, options.disk_bus, options.machine, options.disk_iops)
    argv += nvdimm_argv(options)
    argv += icount_argv(options)
    argv += options.qemu_extra
    return argv


def nvdimm_argv(options):
    """Each NVDIMM of nvdimms(options) as a shared memory-backend-file (the file keeps every
    store across boots) and an nvdimm device in its slot."""
    argv = []
    for slot, (_, nvm) in enumerate(nvdimms(options)):
        name = slot + 1
        argv += ["-object", f"memory-backend-file,id=nv{name},share=on,"
                 f"mem-path={qemu_option_value(nvm.path)},size={nvm.size_mib}M",
                 "-device", f"nvdimm,id=nvdimm{name},memdev=nv{name},slot={slot}"]
    return argv


def _smp_value(options):
    if not options.sockets:
        return str(options.smp)
    cores = options.smp // options.sockets
    return f"{options.smp},sockets={options.sockets},cores={cores},threads=1"


def nvdimms(options):
    """The NVDIMMs in slot order (the order of the NFIT's ranges), each with its role in the
    boot option nvm=ROLE,...: --nvm's is the pager's (a memory node's own, "memnode"),
    --nvm-tier's BLK's tier, a memory node's --memnode-local-nvm its own programs' ("local")."""
    found = [(getattr(options, "nvm_role", "pager"), options.nvm)] if options.nvm else []
    tier = getattr(options, "nvm_tier", None)
    local = getattr(options, "nvm_local", None)
    return found + ([("tier", tier)] if tier else []) + ([("local", local)] if local else [])


def _memory_value(options):
    if not nvdimms(options):
        return f"{options.mem_mib}M"
    maxmem = options.mem_mib + sum(nvm.size_mib for _, nvm in nvdimms(options))
    return f"{options.mem_mib}M,slots={max(2, len(nvdimms(options)))},maxmem={maxmem}M"


def _boot_args(boot, paths, cmdline, check_files):
    needed = {"kernel": ["mkernel", "pkernel"], "usb": ["usb"], "usb-uefi": ["usb"]}.get(boot, ["iso"])
    for name in needed if check_files else []:
        _require(paths[name], "run `make` first")
    if boot == "kernel":
        # -initrd: QEMU's multiboot loader splits modules on ',' (escaped as ',,'). The
        # p-kernel image comes first, then the boot image of user programs when it exists.
        modules = [paths["pkernel"]]
        if paths.get("initrd") and os.path.isfile(paths["initrd"]):
            modules.append(paths["initrd"])
        return ["-kernel", paths["mkernel"], "-initrd",
                ",".join(qemu_option_value(module) for module in modules), "-append", cmdline]
    if boot in ("usb", "usb-uefi"):
        stick = _usb_stick_args(paths["usb"])
        return stick if boot == "usb" else _ovmf_args() + stick
    cdrom = ["-drive", f"file={qemu_option_value(paths['iso'])},media=cdrom,format=raw,readonly=on",
             "-boot", "order=d"]
    if boot == "iso":
        return cdrom
    return _ovmf_args() + cdrom


def _usb_stick_args(image):
    """The image as a USB mass-storage stick behind an xHCI controller, the first boot device.
    A snapshot: the guest's writes (none are expected) never reach the file."""
    return ["-device", "qemu-xhci,id=xhci",
            "-drive", f"if=none,id=stick,format=raw,snapshot=on,file={qemu_option_value(image)}",
            "-device", "usb-storage,bus=xhci.0,drive=stick,bootindex=1"]


def _ovmf_args():
    """OVMF as a read-only code+vars pflash pair: runs are throwaway, so no variables are kept."""
    for code, variables in OVMF_CODE_VARS_PAIRS:
        if os.path.isfile(code) and os.path.isfile(variables):
            return ["-drive", f"if=pflash,format=raw,readonly=on,file={code}",
                    "-drive", f"if=pflash,format=raw,readonly=on,file={variables}"]
    if os.path.isfile(OVMF_SINGLE_IMAGE):
        return ["-bios", OVMF_SINGLE_IMAGE]
    raise MissingFile("no OVMF firmware found: install the 'ovmf' package (build/deps.sh)")


def disk_argv(disk, bus, machine="pc", iops=0):
    """A raw disk image on virtio-blk, AHCI or NVMe, with the image's serial (disk_serial);
    iops > 0 throttles it to that many operations a second (a hard disk's rate)."""
    throttle = f",throttling.iops-total={iops}" if iops > 0 else ""
    drive = ["-drive", f"file={qemu_option_value(disk)},format=raw,if=none,id=disk0{throttle}"]
    if bus == "ahci" and machine == "q35":
        # q35's built-in ICH9 AHCI controller (00:1f.2) has its ports as buses ide.0-ide.5.
        return drive + ["-device", f"ide-hd,drive=disk0,bus=ide.0,serial={disk_serial(disk)}"]
    if bus == "ahci":
        return drive + ["-device", "ahci,id=ahci0",
                        "-device", f"ide-hd,drive=disk0,bus=ahci0.0,serial={disk_serial(disk)}"]
    if bus == "nvme":
        return drive + ["-device", f"nvme,serial={disk_serial(disk)},drive=disk0"]
    return drive + ["-device", f"virtio-blk-pci,drive=disk0,serial={disk_serial(disk)}"]


def disk_serial(disk):
    """The virtio-blk serial (20 characters at most) of an image file: its device and inode,
    so a copy of the image is another disk to BLK's NVM tier (docs/storage.md)."""
    try:
        status = os.stat(disk)
    except OSError:
        return "formica"
    return f"f{status.st_dev:x}i{status.st_ino:x}"[:20]


def _require(path, hint):
    if not os.path.isfile(path):
        raise MissingFile(f"{path} is missing: {hint}")
