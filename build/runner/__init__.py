# The Formica QEMU runner package behind build/run.
# options: flag parsing; accel: KVM probe; qemu_cmd: command line; launch: run and watch QEMU.
