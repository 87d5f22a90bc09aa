# Command-line flags of build/run: parsing and validation into one Options object.
# Everything here is checked before QEMU starts; a bad flag raises UsageError (exit 2).
# Paths are resolved against the current directory, defaults against the repo root.
import argparse
import os
import re
import shlex
import uuid
from dataclasses import dataclass, field
from typing import List, Optional

from . import console as console_flags

MAX_CORES = 256  # FORMICA_MAX_CORES (lib/include/formica/syscalls.h)
PC_MAX_CORES = 255  # QEMU's pc machine refuses more vCPUs; q35 takes up to 4096
PLACEMENT_PRESETS = [str(n) for n in range(1, 10)]
DEFAULT_NVM_MIB = 64
DEFAULT_MEMNODE_MEM = "512M"
MEMNODE_RESERVED_MIB = 32  # at least this much of a memory node is left for its kernel and servers
FREE_TEXT_FLAGS = ("--qemu", "--append", "--cmd", "--memnode-args", "--memnode-cmd", "--client-cmd",
                   "--keys")  # values may start with '-'


class UsageError(Exception):
    """A flag or flag combination that cannot be run."""


@dataclass
class Nvm:
    path: str
    size_mib: int


@dataclass
class Options:
    smp: int
    sockets: Optional[int]
    mem_mib: int
    accel: str
    boot: str
    machine: str
    cpu: Optional[str]
    x2apic: bool
    placement: Optional[str]
    placement_file: Optional[str]
    cmd: Optional[str]
    disk: Optional[str]
    disk_bus: str
    memnodes: int
    nvm: Optional[Nvm]
    icount: bool
    qemu_extra: List[str] = field(default_factory=list)
    timeout: float = 120.0
    append: str = ""
    accel_kernel_options: str = ""  # what the chosen accelerator needs (accel.kvm_kernel_options)
    log: Optional[str] = None
    dry_run: bool = False
    memnode_mem_mib: int = 512
    memnode_capacity_mib: int = 384
    memnode_args: str = ""
    nic: str = "virtio"  # the memory-node network's card on the main machine (memnodes.py)
    memnode_nic: str = "virtio"  # and on each memory node
    nbd_mib: int = 0
    usb_image: Optional[str] = None
    nvm_tier: Optional[Nvm] = None  # --nvm-tier: the NVDIMM of BLK's tier, after --nvm's
    nvm_role: str = "pager"  # whose --nvm is (boot option nvm=ROLE): a memory node's is "memnode"
    memnode_nvm_mib: int = 0  # --memnode-nvm: each node's own NVDIMM (0: nodes keep blocks in DRAM)
    memnode_cluster: str = ""  # --memnode-cluster: 32 hex digits, made per run otherwise
    memnode_local_nvm_mib: int = 0  # --memnode-local-nvm: each node's NVDIMM for its own programs
    nvm_local: Optional[Nvm] = None  # a node's local NVDIMM (boot option role "local")
    memnode_clients: int = 1  # --memnode-clients: client machines, the main machine included
    client_cmd: str = ""  # --client-cmd: what the other client machines run (default --cmd's)
    memnode_part: str = ""  # the boot option memnode_part=J/N of a machine among N clients
    memnode_cmd: str = ""  # --memnode-cmd: shell commands each node runs beside its memnode role
    memnode_remote_share: str = ""  # --memnode-remote-share: the boot option remote_share=P
    memnode_smp: int = 1  # --memnode-smp: each node's cores
    memnode_placement: Optional[str] = None  # --memnode-placement: a preset's name, or "file"
    memnode_placement_file: Optional[str] = None  # and then the file every node gets
    memnode_ivshmem: bool = False  # --memnode-ivshmem: each node's NVM file on the clients too
    disk_iops: int = 0  # --disk-iops: the disk throttled to this many operations a second
    console: console_flags.ConsoleOptions = field(default_factory=console_flags.ConsoleOptions)


def parse_size_mib(text, what):
    """'256M', '1G', '512' (MiB), '65536K' -> MiB; whole MiB only."""
    match = re.fullmatch(r"(\d+)\s*([KMGT]?)(i?B)?", text.strip(), re.IGNORECASE)
    if not match:
        raise UsageError(f"{what}: cannot read size {text!r} (use e.g. 256M or 1G)")
    number = int(match.group(1))
    unit = match.group(2).upper() or "M"
    kib = number * {"K": 1, "M": 1024, "G": 1024**2, "T": 1024**3}[unit]
    if kib % 1024:
        raise UsageError(f"{what}: {text!r} is not a whole number of MiB")
    return kib // 1024


def build_parser():
    parser = argparse.ArgumentParser(
        prog="build/run",
        description="Boot Formica in QEMU. Exit status: 0 guest success, "
        "1 guest failure or panic, 2 usage error, 124 timeout.",
    )
    parser.add_argument("--smp", type=int, default=2, metavar="N", help="cores, 1-256 (default 2; above 255 needs --machine q35)")
    parser.add_argument("--sockets", type=int, metavar="S", help="split the cores into S sockets")
    parser.add_argument("--mem", default="256M", metavar="SIZE", help="guest memory (default 256M)")
    parser.add_argument("--accel", choices=["auto", "kvm", "tcg"], default="auto",
                        help="auto: TCG unless a quick probe shows KVM at full speed")
    parser.add_argument("--boot", choices=["kernel", "iso", "uefi", "usb", "usb-uefi"], default="kernel",
                        help="QEMU -kernel (default), the GRUB ISO under SeaBIOS, or the ISO under OVMF; "
                        "usb, usb-uefi: a USB stick (--usb-image) under SeaBIOS or OVMF")
    parser.add_argument("--usb-image", metavar="FILE",
                        help="the USB stick's contents for --boot usb|usb-uefi (default build/out/formica.iso; "
                        "build/write-usb writes one)")
    parser.add_argument("--machine", choices=["pc", "q35"], default="pc", help="QEMU machine (default pc)")
    parser.add_argument("--cpu", metavar="MODEL", help="QEMU CPU model (default: max under TCG, host under KVM)")
    parser.add_argument("--x2apic", action="store_true", help="require x2APIC in the CPU (QEMU refuses if it cannot)")
    parser.add_argument("--placement", metavar="P", help="preset 1-9 or a placement file")
    parser.add_argument("--cmd", metavar="'A; B'", help="shell commands to run, then power off")
    parser.add_argument("--disk", metavar="IMG",
                        help="disk image (default build/out/disk.img if it exists; 'none' for no disk)")
    parser.add_argument("--disk-bus", choices=["virtio", "ahci", "nvme"], default="virtio",
                        help="how the disk is attached: virtio-blk, AHCI or NVMe (default virtio)")
    parser.add_argument("--disk-iops", type=int, default=0, metavar="N",
                        help="throttle the disk to N reads and writes a second (QEMU's "
                             "throttling.iops-total), as a hard disk (default: unthrottled)")
    parser.add_argument("--memnodes", type=int, default=0, metavar="K", help="memory-node machines to start")
    parser.add_argument("--memnode-mem", default=DEFAULT_MEMNODE_MEM, metavar="SIZE",
                        help="each memory node's guest memory (default 512M)")
    parser.add_argument("--memnode-capacity", metavar="SIZE",
                        help="memory each node offers (default: 3/4 of --memnode-mem)")
    parser.add_argument("--memnode-args", default="", metavar="ARGS",
                        help="extra arguments of every node's memnode program (e.g. '--exit-after 3')")
    parser.add_argument("--memnode-nvm", metavar="SIZE",
                        help="give each memory node an NVDIMM of SIZE (a file per node beside the "
                             "run's logs, kept for the node's restarts): its blocks survive them")
    parser.add_argument("--memnode-local-nvm", metavar="SIZE",
                        help="give each memory node a second NVDIMM of SIZE for its own programs "
                             "(role local, e.g. memstream nvm), apart from the store's")
    parser.add_argument("--memnode-clients", type=int, default=1, metavar="N",
                        help="client machines swapping to the nodes, the main machine included "
                             "(1-4, default 1); each gets its Nth of every node (memnode_part=J/N)")
    parser.add_argument("--client-cmd", metavar="'A; B'",
                        help="shell commands the other client machines run (default: --cmd's)")
    parser.add_argument("--memnode-cmd", default="", metavar="'A; B'",
                        help="shell commands every memory node runs beside its memory-node role "
                             "(which it starts first, in an account of its own)")
    parser.add_argument("--memnode-remote-share", metavar="P",
                        help="the share of a node's core its memory-node role gets against local "
                             "work (0 < P < 1, boot option remote_share=P; default 0.1), or off: "
                             "serving is not held back")
    parser.add_argument("--memnode-smp", type=int, default=1, metavar="N",
                        help="each memory node's cores (default 1)")
    parser.add_argument("--memnode-placement", metavar="P",
                        help="every node's placement: a preset of build/placements/ (1-9, "
                             "memnode-own-core) or a placement file; its key memnode places "
                             "the node's network role (docs/placement.md)")
    parser.add_argument("--memnode-ivshmem", action="store_true",
                        help="also attach each node's NVDIMM file (--memnode-nvm) to the client "
                             "machines as an ivshmem-plain device: their pagers store and "
                             "retrieve one-sided, by memcpy, with no CPU of the node involved")
    parser.add_argument("--memnode-cluster", metavar="ID",
                        help="the memory nodes' cluster id (32 hex digits; default: a new one per "
                             "run); give the same one to use kept node NVM again")
    add_network_flags(parser)
    parser.add_argument("--nbd", metavar="SIZE",
                        help="start an nbdkit memory export of SIZE on the host (Unix socket) and "
                        "attach it as a second virtio-blk disk: the pager's block backend")
    parser.add_argument("--nvm", metavar="FILE[:SIZE]", help="attach a file-backed NVDIMM (default size: the file's, else 64M)")
    parser.add_argument("--nvm-tier", metavar="FILE[:SIZE]",
                        help="attach a second file-backed NVDIMM as BLK's tier in front of the disk "
                             "(default size: the file's, else 64M; the same file on the next boot "
                             "finds the tier again)")
    parser.add_argument("--icount", action="store_true", help="instruction-counted guest time (TCG, single thread)")
    parser.add_argument("--qemu", action="append", default=[], metavar="ARGS", help="extra QEMU arguments (shell-split)")
    parser.add_argument("--timeout", type=float, default=120.0, metavar="S", help="kill QEMU after S seconds (default 120)")
    parser.add_argument("--append", action="append", default=[], metavar="OPTS", help="extra kernel command-line options")
    parser.add_argument("--log", metavar="FILE", help="also save the serial output to FILE")
    parser.add_argument("--dry-run", action="store_true", help="print the QEMU command line and exit")
    console_flags.add_flags(parser)
    return parser


NIC_KINDS = ["virtio", "e1000e"]


def add_network_flags(parser):
    """--nic and --memnode-nic: which card carries the memory-node network."""
    parser.add_argument("--nic", choices=NIC_KINDS,
                        help="the memory-node network's card: virtio-net (default) or an Intel "
                        "e1000e (82574L), on the main machine and, unless --memnode-nic says "
                        "otherwise, on every memory node")
    parser.add_argument("--memnode-nic", choices=NIC_KINDS,
                        help="the memory nodes' card (default: --nic's)")


def _network_cards(args):
    """(main machine's card, nodes' card); a card without memory nodes would carry nothing."""
    if args.memnodes == 0 and (args.nic or args.memnode_nic):
        raise UsageError("--nic/--memnode-nic: the card is the memory nodes' network; "
                         "give --memnodes K")
    nic = args.nic or "virtio"
    return nic, args.memnode_nic or nic


def parse(argv, repo_root):
    """Parse argv into Options; raise UsageError on anything invalid."""
    args = build_parser().parse_args(_glue_free_text_values(argv))  # exits 2 on bad flags

    if not 1 <= args.smp <= MAX_CORES:
        raise UsageError(f"--smp {args.smp}: must be between 1 and {MAX_CORES}")
    if args.smp > PC_MAX_CORES and args.machine == "pc":
        raise UsageError(f"--smp {args.smp}: QEMU's pc machine has at most {PC_MAX_CORES} cores; "
                         "use --machine q35")
    if args.sockets is not None:
        if args.sockets < 1 or args.sockets > args.smp or args.smp % args.sockets:
            raise UsageError(f"--sockets {args.sockets}: must divide --smp {args.smp}")
    mem_mib = parse_size_mib(args.mem, "--mem")
    if mem_mib < 8:  # smaller guests are the kernel's to refuse, with its own message
        raise UsageError("--mem: at least 8M")
    if args.timeout <= 0:
        raise UsageError("--timeout: must be positive")
    if args.icount and args.accel == "kvm":
        raise UsageError("--icount needs TCG; it cannot be used with --accel kvm")
    if args.memnodes < 0:
        raise UsageError("--memnodes: must be 0 or more")
    memnode_mem_mib, memnode_capacity_mib = _memnode_sizes(args)
    nic, memnode_nic = _network_cards(args)
    memnode_nvm_mib, memnode_cluster = _memnode_nvm(args)
    memnode_local_nvm_mib = _memnode_local_nvm(args)
    _memnode_ivshmem(args, memnode_nvm_mib)
    memnode_clients, client_cmd = _memnode_clients(args)

    placement, placement_file = None, None
    if args.placement is not None:
        if args.placement in PLACEMENT_PRESETS:
            placement = args.placement
        elif os.path.isfile(args.placement):
            placement, placement_file = "file", os.path.abspath(args.placement)
        else:
            raise UsageError(f"--placement {args.placement!r}: not a preset 1-9 nor a file")
    memnode_smp, memnode_placement, memnode_placement_file = _memnode_cores(args, repo_root)

    if args.cmd is not None and not args.cmd.strip():
        raise UsageError("--cmd: empty command")

    disk = _choose_disk(args.disk, repo_root)
    nbd_mib = _nbd_size(args, disk)
    if args.usb_image is not None:
        if not args.boot.startswith("usb"):
            raise UsageError("--usb-image: only with --boot usb or usb-uefi")
        if not os.path.isfile(args.usb_image):
            raise UsageError(f"--usb-image {args.usb_image!r}: no such file")

    try:
        console = console_flags.parse_flags(args)
    except console_flags.ConsoleUsageError as error:
        raise UsageError(str(error)) from None

    return Options(
        smp=args.smp,
        sockets=args.sockets,
        mem_mib=mem_mib,
        accel=args.accel,
        boot=args.boot,
        machine=args.machine,
        cpu=args.cpu,
        x2apic=args.x2apic,
        placement=placement,
        placement_file=placement_file,
        cmd=args.cmd,
        disk=disk,
        disk_bus=args.disk_bus,
        memnodes=args.memnodes,
        nvm=_parse_nvm(args.nvm) if args.nvm else None,
        nvm_tier=_parse_nvm(args.nvm_tier, "--nvm-tier") if args.nvm_tier else None,
        disk_iops=max(0, args.disk_iops),
        icount=args.icount,
        qemu_extra=[word for text in args.qemu for word in shlex.split(text)],
        timeout=args.timeout,
        append=" ".join(part.strip() for part in args.append if part.strip()),
        log=args.log,
        dry_run=args.dry_run,
        memnode_mem_mib=memnode_mem_mib,
        memnode_capacity_mib=memnode_capacity_mib,
        memnode_args=args.memnode_args.strip(),
        nic=nic,
        memnode_nic=memnode_nic,
        memnode_nvm_mib=memnode_nvm_mib,
        memnode_cluster=memnode_cluster,
        memnode_local_nvm_mib=memnode_local_nvm_mib,
        memnode_ivshmem=args.memnode_ivshmem,
        memnode_clients=memnode_clients,
        client_cmd=client_cmd,
        memnode_part=f"1/{memnode_clients}" if memnode_clients > 1 else "",
        memnode_cmd=args.memnode_cmd.strip(),
        memnode_remote_share=_remote_share(args),
        memnode_smp=memnode_smp,
        memnode_placement=memnode_placement,
        memnode_placement_file=memnode_placement_file,
        nbd_mib=nbd_mib,
        usb_image=os.path.abspath(args.usb_image) if args.usb_image else None,
        console=console,
    )


def _nbd_size(args, disk):
    """--nbd SIZE in MiB; DK must keep the first virtio-blk disk, so it needs a virtio disk."""
    if args.nbd is None:
        return 0
    size_mib = parse_size_mib(args.nbd, "--nbd")
    if size_mib < 1:
        raise UsageError("--nbd: at least 1M")
    if disk is None or args.disk_bus != "virtio":
        raise UsageError("--nbd needs the virtio disk (DK drives the first virtio-blk; the "
                         "export is the second)")
    return size_mib


def _remote_share(args):
    """--memnode-remote-share P: a decimal fraction strictly between 0 and 1 (up to 3 digits),
    or off."""
    if args.memnodes == 0 and (args.memnode_remote_share or args.memnode_cmd):
        raise UsageError("--memnode-cmd/--memnode-remote-share: give --memnodes K")
    if args.memnode_remote_share is None:
        return ""
    text = args.memnode_remote_share.strip()
    if text == "off":
        return text
    if not re.fullmatch(r"0?\.\d{1,3}", text) or float(text) == 0:
        raise UsageError(f"--memnode-remote-share {text!r}: a fraction between 0 and 1, "
                         "e.g. 0.25 (at most 3 digits), or off")
    return text


def _memnode_cores(args, repo_root):
    """--memnode-smp N (1 up to the pc machine's limit) and --memnode-placement P: a preset
    (build/placements/P.conf, by name) or a file. The file itself is the nodes' kernel's to
    check: a core a node lacks or a key given twice is its parser's error, and the node
    boots with the safe default (docs/placement.md)."""
    if args.memnodes == 0 and (args.memnode_smp != 1 or args.memnode_placement):
        raise UsageError("--memnode-smp/--memnode-placement: give --memnodes K")
    if not 1 <= args.memnode_smp <= PC_MAX_CORES:
        raise UsageError(f"--memnode-smp {args.memnode_smp}: must be between 1 and {PC_MAX_CORES}")
    choice = args.memnode_placement
    if choice is None:
        return args.memnode_smp, None, None
    preset = os.path.join(repo_root, "build", "placements", f"{choice}.conf")
    if re.fullmatch(r"[0-9a-z][0-9a-z-]{0,30}", choice) and os.path.isfile(preset):
        return args.memnode_smp, choice, None
    if os.path.isfile(choice):
        return args.memnode_smp, "file", os.path.abspath(choice)
    raise UsageError(f"--memnode-placement {choice!r}: not a preset of build/placements/ "
                     "nor a file")


def _memnode_nvm(args):
    """--memnode-nvm in MiB (0: none) and the cluster id (--memnode-cluster, else a new one)."""
    if args.memnodes == 0 and (args.memnode_nvm or args.memnode_cluster):
        raise UsageError("--memnode-nvm/--memnode-cluster: give --memnodes K")
    nvm_mib = parse_size_mib(args.memnode_nvm, "--memnode-nvm") if args.memnode_nvm else 0
    if args.memnode_nvm and nvm_mib < 1:
        raise UsageError("--memnode-nvm: at least 1M")
    cluster = (args.memnode_cluster or "").strip().lower()
    if args.memnode_cluster is not None and not re.fullmatch(r"[0-9a-f]{32}", cluster):
        raise UsageError(f"--memnode-cluster {args.memnode_cluster!r}: not 32 hex digits")
    if args.memnodes and not cluster:
        cluster = uuid.uuid4().hex
    return nvm_mib, cluster


def _memnode_ivshmem(args, nvm_mib):
    """--memnode-ivshmem: the nodes' NVM files shared with the clients, so it needs
    --memnodes and --memnode-nvm, of a power-of-two size (a PCI BAR's)."""
    if not args.memnode_ivshmem:
        return
    if args.memnodes == 0:
        raise UsageError("--memnode-ivshmem: give --memnodes K")
    if not nvm_mib:
        raise UsageError("--memnode-ivshmem: the one-sided path writes into the nodes' NVM "
                         "store; give --memnode-nvm SIZE (nodes keeping their blocks in DRAM "
                         "have nothing to share)")
    if nvm_mib & (nvm_mib - 1):
        raise UsageError(f"--memnode-ivshmem: --memnode-nvm {nvm_mib}M is not a power of two "
                         "(the ivshmem BAR that shows it must be)")


def _memnode_local_nvm(args):
    """--memnode-local-nvm in MiB (0: none): the NVDIMM a node's own programs use."""
    if args.memnode_local_nvm is None:
        return 0
    if args.memnodes == 0:
        raise UsageError("--memnode-local-nvm: give --memnodes K")
    size_mib = parse_size_mib(args.memnode_local_nvm, "--memnode-local-nvm")
    if size_mib < 1:
        raise UsageError("--memnode-local-nvm: at least 1M")
    return size_mib


MAX_CLIENTS = 4  # client machines beside the nodes: 4 QEMUs and a node already fill 2 host cores


def _memnode_clients(args):
    """--memnode-clients N (1-4) and --client-cmd (default: --cmd's)."""
    if args.memnodes == 0 and (args.memnode_clients != 1 or args.client_cmd is not None):
        raise UsageError("--memnode-clients/--client-cmd: give --memnodes K")
    if not 1 <= args.memnode_clients <= MAX_CLIENTS:
        raise UsageError(f"--memnode-clients {args.memnode_clients}: between 1 and {MAX_CLIENTS}")
    if args.client_cmd is not None and not args.client_cmd.strip():
        raise UsageError("--client-cmd: empty command")
    if args.memnode_clients > 1 and not (args.client_cmd or args.cmd):
        raise UsageError("--memnode-clients: the other clients need --client-cmd or --cmd")
    return args.memnode_clients, (args.client_cmd or args.cmd or "").strip()


def _memnode_sizes(args):
    """--memnode-mem and --memnode-capacity in MiB; the capacity must leave room to boot."""
    if args.memnodes > 16:
        raise UsageError("--memnodes: at most 16")
    mem_mib = parse_size_mib(args.memnode_mem, "--memnode-mem")
    if args.memnode_capacity is None:
        capacity_mib = mem_mib * 3 // 4
    else:
        capacity_mib = parse_size_mib(args.memnode_capacity, "--memnode-capacity")
    if capacity_mib < 1 or capacity_mib + MEMNODE_RESERVED_MIB > mem_mib:
        raise UsageError(f"--memnode-capacity: between 1M and --memnode-mem minus "
                         f"{MEMNODE_RESERVED_MIB}M ({mem_mib - MEMNODE_RESERVED_MIB}M)")
    return mem_mib, capacity_mib


def _glue_free_text_values(argv):
    """Turn '--qemu -S' into '--qemu=-S' so argparse does not take '-S' for a flag."""
    glued, index = [], 0
    while index < len(argv):
        word = argv[index]
        if word in FREE_TEXT_FLAGS and index + 1 < len(argv):
            glued.append(f"{word}={argv[index + 1]}")
            index += 2
        else:
            glued.append(word)
            index += 1
    return glued


def _choose_disk(disk_flag, repo_root):
    if disk_flag == "none":
        return None
    if disk_flag is None:
        default = os.path.join(repo_root, "build", "out", "disk.img")
        return default if os.path.isfile(default) else None
    if not os.path.isfile(disk_flag):
        raise UsageError(f"--disk {disk_flag!r}: no such file")
    return os.path.abspath(disk_flag)


def _parse_nvm(text, flag="--nvm"):
    path, _, size_text = text.partition(":")
    if not path:
        raise UsageError(f"{flag}: missing FILE")
    if size_text:
        size_mib = parse_size_mib(size_text, flag)
    elif os.path.isfile(path) and os.path.getsize(path) > 0:
        size_bytes = os.path.getsize(path)
        if size_bytes % (1024 * 1024):
            raise UsageError(f"{flag} {path!r}: file size is not a whole number of MiB; give :SIZE")
        size_mib = size_bytes // (1024 * 1024)
    else:
        size_mib = DEFAULT_NVM_MIB
    if size_mib < 1:
        raise UsageError(f"{flag}: size must be at least 1M")
    return Nvm(path=os.path.abspath(path), size_mib=size_mib)
