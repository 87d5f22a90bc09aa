# build/run's main(): parse flags, pick the accelerator, build the QEMU command, run it.
# Exit statuses: 0 guest success, 1 guest failure/panic, 2 usage error or missing
# build outputs (nothing was run), 124 timeout.
import dataclasses
import os
import shlex
import sys

from . import accel, console, launch, memnodes, nbd, options, qemu_binary, qemu_cmd

EXIT_USAGE = 2
EXIT_FAILURE = 1
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
OUT_DIR = os.path.join(REPO_ROOT, "build", "out")


def build_paths():
    return {
        "mkernel": os.path.join(OUT_DIR, "mkernel.elf"),
        "pkernel": os.path.join(OUT_DIR, "pkernel.elf"),
        "initrd": os.path.join(OUT_DIR, "initrd.tar"),
        "iso": os.path.join(OUT_DIR, "formica.iso"),
    }


def kvm_options(opts, qemu):
    """opts with the CPU model KVM starts here (unless --cpu gave one) and the kernel
    options this host's KVM needs, each said on stderr; None when KVM cannot start."""
    changes = {}
    if opts.cpu is None:
        model, reason = accel.kvm_cpu_model(qemu, OUT_DIR)
        if model is None:
            print(f"build/run: --accel kvm: QEMU starts no CPU model under KVM here: {reason}",
                  file=sys.stderr)
            return None
        print(f"build/run: KVM CPU model {model} ({reason})", file=sys.stderr, flush=True)
        changes["cpu"] = model
    kernel_options, reason = accel.kvm_kernel_options()
    if kernel_options:
        print(f"build/run: kernel option {kernel_options}: {reason}", file=sys.stderr, flush=True)
        changes["accel_kernel_options"] = kernel_options
    return dataclasses.replace(opts, **changes)


def main(argv):
    try:
        opts = options.parse(argv, REPO_ROOT)
    except options.UsageError as error:
        print(f"build/run: {error}", file=sys.stderr)
        return EXIT_USAGE

    qemu, qemu_source = qemu_binary.choose(REPO_ROOT, icount=opts.icount)
    if not qemu_binary.resolved_path(qemu):
        print(f"build/run: {qemu} ({qemu_source}) not found: run build/deps.sh", file=sys.stderr)
        return EXIT_USAGE
    if opts.accel == "kvm" and not accel.kvm_usable():
        print("build/run: --accel kvm: /dev/kvm is missing or not accessible", file=sys.stderr)
        return EXIT_USAGE

    chosen_accel = accel.resolve(opts.accel, opts.icount, qemu, OUT_DIR)
    if chosen_accel == "kvm":
        opts = kvm_options(opts, qemu)
        if opts is None:
            return EXIT_USAGE
    try:
        argv_qemu = qemu_cmd.build_argv(opts, chosen_accel, build_paths(), qemu,
                                         check_files=not opts.dry_run)
    except qemu_cmd.MissingFile as error:
        print(f"build/run: {error}", file=sys.stderr)
        return EXIT_USAGE

    argv_qemu = console.adapt_argv(argv_qemu, opts.console, opts.boot)
    session = None
    if console.needs_session(opts.console):
        session = console.Session(opts.console, build_paths()["mkernel"])
        argv_qemu += session.qemu_args()

    nodes = None
    if opts.memnodes:
        try:
            nodes = memnodes.MemoryNodes(opts, chosen_accel, build_paths(), qemu, OUT_DIR)
        except qemu_cmd.MissingFile as error:
            print(f"build/run: {error}", file=sys.stderr)
            return EXIT_USAGE
        argv_qemu += nodes.main_args()

    nbd_server = nbd.NbdServer(opts.nbd_mib, opts.dry_run) if opts.nbd_mib else None
    if nbd_server is not None:
        argv_qemu += nbd_server.main_args()

    if opts.dry_run:
        if session is not None:
            session.finish()  # nothing ran: only its socket's directory goes
        if nbd_server is not None:
            print(shlex.join(nbd_server.argv()))
        print(shlex.join(argv_qemu))
        for argv_node in nodes.argvs + nodes.client_argvs if nodes else []:
            print(shlex.join(argv_node))
        return 0
    cmdline = qemu_cmd.kernel_cmdline(opts)
    print(f"build/run: QEMU {qemu_binary.version(qemu)} ({qemu_source}: "
          f"{qemu_binary.resolved_path(qemu)})", file=sys.stderr, flush=True)
    print(f"build/run: {opts.boot} boot, {opts.smp} cores, {chosen_accel}, "
          f"kernel options: {cmdline or '(none)'}", file=sys.stderr, flush=True)
    if nbd_server is not None and not nbd_server.start():
        return EXIT_FAILURE
    try:
        if nodes is not None and not nodes.start():
            return EXIT_FAILURE
        terminal = qemu_cmd.interactive(opts) and sys.stdin.isatty()
        status = launch.run(argv_qemu, opts.timeout, opts.log, terminal,
                            {name: build_paths()[name] for name in ("mkernel", "pkernel")},
                            session)
        if nodes is not None:
            nodes.wait_for_clients()  # the other client machines finish theirs
        return status
    finally:
        if nodes is not None:
            nodes.stop()  # the nodes never outlive the main machine
        if nbd_server is not None:
            nbd_server.stop()  # nor does the NBD export
