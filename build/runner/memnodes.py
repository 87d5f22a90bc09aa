# --memnodes K: K extra QEMU machines in the memory-node role (apps/memnode), all K+1 machines
# on one L2 segment made of UDP multicast bound to 127.0.0.1 only (a fresh port per run),
# each with its own MAC. Node output goes to log files; nodes never outlive the runner.
# With --memnode-nvm each node has its own NVDIMM file beside the logs (kept, so a restarted
# node finds its blocks); touching node-I.restart there restarts node I (killed, booted again).
# With --memnode-local-nvm each node has a second NVDIMM for its own programs (role "local").
# With --memnode-ivshmem every client machine also gets each node's NVDIMM file as an
# ivshmem-plain device (the same host file, shared): its pager goes one-sided.
# With --memnode-clients N, N-1 more client machines (no disk) run --client-cmd on the segment
# beside the main machine, each told its part of the nodes (memnode_part=J/N).
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from . import options as options_module
from . import qemu_cmd
from .launch import GUEST_FAILURE_STATUS, GUEST_SUCCESS_STATUS, kill_group

MULTICAST_GROUP = "230.0.0.1"  # reached only through localaddr=127.0.0.1: loopback, nothing else
MAC_PREFIX = "52:54:00:4d:4e"  # locally administered QEMU range; last byte = machine index
START_CHECK_SECONDS = 1.0      # a node QEMU that exits this early failed to start
SERVE_WAIT_SECONDS = 20.0      # how long the main machine waits for the nodes to serve
RESTART_POLL_SECONDS = 0.2     # how often the restart requests (node-I.restart files) are looked for
CLIENT_MAC_BASE = 0x40        # client machine J (2..N) has MAC ...:4J; nodes have 01..10
SERVING = b"memnode: node %d serving"  # the line a node prints once it answers requests
MTU = 32800  # virtio-net host_mtu: a 32 KiB memory-node fragment and its headers in one frame


def mac_address(index):
    return f"{MAC_PREFIX}:{index:02x}"


def free_port():
    """A UDP port free on 127.0.0.1 right now: the multicast group's port for this run."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def network_args(port, index, nic="virtio"):
    """The card of machine `index` (0 = the main machine) on the segment: `nic` is "virtio"
    or "e1000e". No option ROM: firmware never touches the card."""
    return ["-netdev", f"socket,id=memnet,mcast={MULTICAST_GROUP}:{port},localaddr=127.0.0.1",
            "-device", nic_device(nic, mac_address(index))]


def nic_device(nic, mac):
    """The -device value of one card. virtio-net offers an MTU of 32800 (host_mtu); the e1000e
    has none to offer: its driver takes jumbo frames of MTU 9000 (docs/memnode.md)."""
    if nic == "e1000e":
        return f"e1000e,netdev=memnet,mac={mac},romfile="
    return f"virtio-net-pci,netdev=memnet,mac={mac},host_mtu={MTU},romfile="


def node_command(opts, index):
    """The shell command a memory node runs: serve its capacity until powered off. With
    --memnode-cmd the role is started first and the node's own commands run beside it (then
    the shell waits for the role, so the node goes on serving). The role goes to the core
    its placement's key memnode names (`@memnode`; the shell's core 0 when none does), the
    node's own commands to the shell's core unless they say `@CORE`."""
    # the node gives its memory away: its account may use all of it (docs/authority.md)
    verb = "start" if opts.memnode_cmd else "run"
    words = [f"{verb} --driver --memory {opts.memnode_mem_mib}M memnode",
             str(opts.memnode_capacity_mib), "--id", str(index)]
    if opts.memnode_args:
        words.append(opts.memnode_args)
    words.append("@memnode")
    if opts.memnode_cmd:
        return " ".join(words) + f"; {opts.memnode_cmd}; wait"
    return " ".join(words)


def node_boot_options(opts):
    """The boot options every node gets: the cluster id and remote_share=."""
    words = [f"memnode_cluster={opts.memnode_cluster}"] if opts.memnode_cluster else []
    if opts.memnode_remote_share:
        words.append(f"remote_share={opts.memnode_remote_share}")
    return " ".join(words)


def node_options(opts, index, nvm_path=None, local_nvm_path=None):
    """The main machine's options turned into one memory node's: --memnode-smp cores (1
    socket), its own memory, --memnode-placement's placement, no disk or extra QEMU
    arguments; its own NVDIMM (role "memnode") when --memnode-nvm gave one, and one for its
    own programs (role "local") when --memnode-local-nvm did; the cluster id as
    memnode_cluster=."""
    nvm = (options_module.Nvm(path=nvm_path, size_mib=opts.memnode_nvm_mib)
           if nvm_path and opts.memnode_nvm_mib else None)
    local = (options_module.Nvm(path=local_nvm_path, size_mib=opts.memnode_local_nvm_mib)
             if local_nvm_path and opts.memnode_local_nvm_mib else None)
    return dataclasses.replace(
        opts, smp=opts.memnode_smp, sockets=None, mem_mib=opts.memnode_mem_mib,
        placement=opts.memnode_placement, placement_file=opts.memnode_placement_file,
        cmd=node_command(opts, index), disk=None, memnodes=0, nvm=nvm,
        nvm_tier=None, nvm_role="memnode", nvm_local=local, qemu_extra=[],
        append=node_boot_options(opts), memnode_part="",
        log=None)


def client_options(opts, index):
    """The main machine's options turned into client machine `index` (2..N) of
    --memnode-clients N: the same cores and memory, --client-cmd, no disk, NVDIMM or extra
    QEMU arguments, its part of every node as memnode_part=J/N."""
    return dataclasses.replace(
        opts, cmd=opts.client_cmd, disk=None, nvm=None, nvm_tier=None, nvm_local=None,
        qemu_extra=[], memnode_part=f"{index}/{opts.memnode_clients}", log=None)


class MemoryNodes:
    """Starts, checks and stops the memory-node QEMUs of one run."""

    def __init__(self, opts, accel, paths, qemu, out_dir):
        self.opts = opts
        self.port = free_port()
        self.log_dir = self._log_dir(opts, out_dir)
        self.nvm_dir = os.path.dirname(os.path.abspath(opts.log)) if opts.log \
            else os.path.join(out_dir, "memnodes")
        self.argvs = [qemu_cmd.build_argv(node_options(opts, index, self.nvm_path(index),
                                                       self.local_nvm_path(index)), accel,
                                          paths, qemu, check_files=not opts.dry_run)
                      + network_args(self.port, index, opts.memnode_nic)
                      for index in range(1, opts.memnodes + 1)]
        self.client_argvs = [qemu_cmd.build_argv(client_options(opts, index), accel, paths, qemu,
                                                 check_files=not opts.dry_run)
                             + network_args(self.port, CLIENT_MAC_BASE + index, opts.nic)
                             + self.ivshmem_args()
                             for index in range(2, opts.memnode_clients + 1)]
        self.clients = []
        self.processes = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.watcher = None

    def _log_dir(self, opts, out_dir):
        if opts.log:
            return os.path.dirname(os.path.abspath(opts.log))
        return os.path.join(out_dir, "memnodes", str(self.port))

    def log_path(self, index):
        if self.opts.log:
            return f"{os.path.abspath(self.opts.log)}.node-{index}.log"
        return os.path.join(self.log_dir, f"node-{index}.log")

    def pid_path(self, index):
        """Where node `index`'s QEMU pid is written (tests kill it to simulate a dead node)."""
        return os.path.splitext(self.log_path(index))[0] + ".pid"

    def nvm_path(self, index):
        """Node `index`'s NVDIMM file (--memnode-nvm): the same path on every boot of this
        run directory (with --log: beside it), so a restarted node finds its store."""
        if not self.opts.memnode_nvm_mib:
            return None
        if self.opts.log:
            return f"{os.path.abspath(self.opts.log)}.node-{index}.nvm"
        return os.path.join(self.nvm_dir, f"node-{index}.nvm")

    def local_nvm_path(self, index):
        """Node `index`'s NVDIMM for its own programs (--memnode-local-nvm), beside its store's."""
        if not self.opts.memnode_local_nvm_mib:
            return None
        if self.opts.log:
            return f"{os.path.abspath(self.opts.log)}.node-{index}.local.nvm"
        return os.path.join(self.nvm_dir, f"node-{index}.local.nvm")

    def client_log_path(self, index):
        """Client machine `index`'s (2..N) console output."""
        if self.opts.log:
            return f"{os.path.abspath(self.opts.log)}.client-{index}.log"
        return os.path.join(self.log_dir, f"client-{index}.log")

    def restart_path(self, index):
        """Touching this file restarts node `index` (tests: a node that crashes and comes back)."""
        return os.path.splitext(self.log_path(index))[0] + ".restart"

    def main_args(self):
        return network_args(self.port, 0, self.opts.nic) + self.ivshmem_args()

    def ivshmem_args(self):
        """With --memnode-ivshmem: each node's NVDIMM file as an ivshmem-plain device of a
        client machine (share=on: the node's own mapping and this one see the same bytes)."""
        if not self.opts.memnode_ivshmem:
            return []
        argv = []
        for index in range(1, self.opts.memnodes + 1):
            path = qemu_cmd.qemu_option_value(self.nvm_path(index))
            argv += ["-object", f"memory-backend-file,id=ivshmem{index},share=on,"
                     f"mem-path={path},size={self.opts.memnode_nvm_mib}M",
                     "-device", f"ivshmem-plain,memdev=ivshmem{index}"]
        return argv

    def start(self):
        """Start every node; False (and everything stopped) when one fails to start."""
        os.makedirs(self.log_dir, exist_ok=True)
        os.makedirs(self.nvm_dir, exist_ok=True)
        if self.opts.memnode_nvm_mib:
            _note(f"memory-node cluster {self.opts.memnode_cluster} (give --memnode-cluster "
                  f"{self.opts.memnode_cluster} to serve these nodes' NVM again)")
        for index, argv in enumerate(self.argvs, start=1):
            if os.path.exists(self.restart_path(index)):
                os.remove(self.restart_path(index))
            self.processes.append(self._launch(index, argv, "wb"))
            store = (f"NVM {self.nvm_path(index)} ({self.opts.memnode_nvm_mib} MiB)"
                     if self.opts.memnode_nvm_mib else "DRAM")
            if self.opts.memnode_ivshmem:
                store += ", shared with the clients through ivshmem (one-sided)"
            _note(f"memory node {index}: pid {self.processes[-1].pid}, MAC {mac_address(index)} "
                  f"({self.opts.memnode_nic}), {_cores(self.opts)}, "
                  f"{self.opts.memnode_capacity_mib} MiB in {store}, "
                  f"log {self.log_path(index)}")
        time.sleep(START_CHECK_SECONDS)
        failed = [index for index, process in enumerate(self.processes, start=1)
                  if process.poll() is not None]
        for index in failed:
            _note(f"memory node {index} failed to start (QEMU exit status "
                  f"{self.processes[index - 1].returncode}):")
            _note_log_tail(self.log_path(index))
        if failed:
            self.stop()
            return False
        self._wait_until_serving()
        self.watcher = threading.Thread(target=self._watch_restarts, daemon=True)
        self.watcher.start()
        self._start_clients()
        return True

    def _start_clients(self):
        """The other client machines (--memnode-clients), once the nodes serve."""
        self.clients_started = time.monotonic()
        for index, argv in enumerate(self.client_argvs, start=2):
            with open(self.client_log_path(index), "wb") as log:
                process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                           stderr=subprocess.STDOUT, start_new_session=True)
            self.clients.append(process)
            _note(f"client machine {index} of {self.opts.memnode_clients}: pid {process.pid}, "
                  f"MAC {mac_address(CLIENT_MAC_BASE + index)}, part "
                  f"{index}/{self.opts.memnode_clients} of every node, "
                  f"log {self.client_log_path(index)}")

    def wait_for_clients(self):
        """After the main machine ended: let the other clients finish their commands (they
        power off), until the run's --timeout since they started; the rest are stopped."""
        deadline = getattr(self, "clients_started", time.monotonic()) + self.opts.timeout
        for index, process in enumerate(self.clients, start=2):
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
                _note(f"client machine {index} {_client_outcome(process.returncode)}")
            except subprocess.TimeoutExpired:
                kill_group(process)
                _note(f"client machine {index} stopped at the timeout")

    def _launch(self, index, argv, mode):
        with open(self.log_path(index), mode) as log:
            process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        with open(self.pid_path(index), "w") as pid_file:
            pid_file.write(f"{process.pid}\n")
        return process

    def _watch_restarts(self):
        """Restart node I (kill its QEMU, boot it again with the same NVDIMM file, its output
        appended to its log) whenever node-I.restart appears."""
        while not self.stopping.wait(RESTART_POLL_SECONDS):
            for index in range(1, len(self.argvs) + 1):
                if os.path.exists(self.restart_path(index)):
                    os.remove(self.restart_path(index))
                    self._restart(index)

    def _restart(self, index):
        with self.lock:
            if self.stopping.is_set() or index > len(self.processes):
                return
            _crash(self.processes[index - 1])
            self.processes[index - 1] = self._launch(index, self.argvs[index - 1], "ab")
            _note(f"memory node {index} restarted: pid {self.processes[index - 1].pid}")

    def _wait_until_serving(self):
        """Wait (up to SERVE_WAIT_SECONDS) until every node says it serves: on a loaded host a
        node may still be booting when the main machine's pager first looks for it."""
        waiting = set(range(1, len(self.processes) + 1))
        deadline = time.monotonic() + SERVE_WAIT_SECONDS
        while waiting and time.monotonic() < deadline:
            for index in list(waiting):
                if self.processes[index - 1].poll() is not None or self._serving(index):
                    waiting.discard(index)
            if waiting:
                time.sleep(0.1)
        for index in sorted(waiting):
            _note(f"memory node {index} not serving after {SERVE_WAIT_SECONDS:.0f} s; going on")

    def _serving(self, index):
        try:
            with open(self.log_path(index), "rb") as log:
                return SERVING % index in log.read()
        except OSError:
            return False

    def stop(self):
        """Kill every node still running and say how each ended."""
        self.stopping.set()
        with self.lock:
            self._stop_all()

    def _stop_all(self):
        for index, process in enumerate(self.clients, start=2):
            if process.poll() is None:
                kill_group(process)
                _note(f"client machine {index} stopped")
        self.clients = []
        for index, process in enumerate(self.processes, start=1):
            if process.poll() is not None:
                _note(f"memory node {index} had exited (status {process.returncode})")
                continue
            kill_group(process)
            _note(f"memory node {index} stopped")
        self.processes = []


def _client_outcome(status):
    """How a client machine's QEMU ended, as the main machine's is told (launch.py)."""
    if status == GUEST_SUCCESS_STATUS:
        return "reported success"
    if status == GUEST_FAILURE_STATUS:
        return "reported failure"
    return f"ended (QEMU exit status {status})"


def _cores(opts):
    """A node's cores and, when --memnode-placement gave one, its placement."""
    cores = f"{opts.memnode_smp} core{'s' if opts.memnode_smp > 1 else ''}"
    if opts.memnode_placement_file:
        return f"{cores}, placement {opts.memnode_placement_file}"
    return f"{cores}, placement {opts.memnode_placement}" if opts.memnode_placement else cores


def _crash(process):
    """SIGKILL the node's QEMU group at once (a crash, not a shutdown) and reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _note_log_tail(path, lines=10):
    try:
        with open(path, "rb") as log:
            tail = log.read().decode("utf-8", errors="replace").splitlines()[-lines:]
    except OSError:
        return
    for line in tail:
        _note(f"  | {line}")


def _note(message):
    print(f"build/run: {message}", file=sys.stderr, flush=True)
