"""build/protocol_servers.py: the server manifest. The interface lines program,
boot, placement, rights, spawn, user, reserved, restart, instances, optional and beside
of protocol/*.messages
declare each server once; this module checks them across every interface and
generates what the kernels, init, the shell and the build need from them
(formica/protocol/servers.h, formica/protocol/boot_servers.h, servers.mk).
Used by build/protocol.py; the format is in protocol/README.md."""

SPAWN_FLAGS = {"driver": "SPAWN_DRIVER", "grant_driver": "SPAWN_GRANT_DRIVER"}
MANIFEST_KEYWORDS = ("program", "boot", "placement", "rights", "spawn", "user", "reserved", "restart",
                     "instances", "optional", "beside")


class ServerManifest:
    """What one interface's server lines say (all unset for a non-server)."""

    def __init__(self):
        self.program = None  # source folder; the boot image names the program as the server
        self.boot = None  # init's start order (1, 2, ...), or None: not started at boot
        self.placement = None  # the placement-file key naming its core
        self.rights = []  # RIGHT_* names, lower case, without RIGHT_
        self.spawn = []  # keys of SPAWN_FLAGS
        self.user = None  # the uid (and gid) it runs as (docs/authority.md), or None: init's
        self.reserved = False  # only a process with RIGHT_RESERVED_NAME may register the name
        self.restart = 0  # init restarts it when it ends, at most this often
        self.instances = False  # its placement key may name several cores (one instance on each)
        self.optional = False  # init starts it only when the placement names its key
        self.beside = None  # a placement key: its core when the placement does not name this one


def parse_manifest_line(manifest, keyword, words, error):
    """One interface line of the manifest; `error` is the exception class to raise."""
    if keyword == "program":
        manifest.program = words[1]
    elif keyword == "boot":
        manifest.boot = int(words[1], 0)
    elif keyword == "placement":
        manifest.placement = words[1]
    elif keyword == "rights":
        manifest.rights += words[1:]
    elif keyword == "spawn":
        unknown = [flag for flag in words[1:] if flag not in SPAWN_FLAGS]
        if unknown:
            raise error(f"unknown spawn flag '{unknown[0]}' (known: {', '.join(SPAWN_FLAGS)})")
        manifest.spawn += words[1:]
    elif keyword == "user":
        manifest.user = int(words[1], 0)
    elif keyword == "reserved":
        manifest.reserved = True
    elif keyword == "restart":
        manifest.restart = int(words[1], 0)
    elif keyword == "instances":
        manifest.instances = True
    elif keyword == "optional":
        manifest.optional = True
    elif keyword == "beside":
        manifest.beside = words[1]


def check_one(interface, error):
    manifest = interface.manifest
    declared = manifest.program or manifest.boot is not None or manifest.placement or \
        manifest.rights or manifest.spawn or manifest.reserved or manifest.restart or \
        manifest.instances or manifest.optional
    if declared and interface.server is None:
        raise error(f"{interface.path}: server lines need a 'server NAME' line")
    if manifest.boot is None and (manifest.placement or manifest.restart or manifest.spawn or
                                  manifest.rights or manifest.user is not None or
                                  manifest.instances or manifest.optional):
        raise error(f"{interface.path}: placement, rights, spawn, user, restart, instances and "
                    f"optional are for a server started at boot: add 'boot N'")
    if manifest.user is not None and not 0 < manifest.user < 1000:
        raise error(f"{interface.path}: a server's user is a system uid, 1-999 (0 is init's, "
                    f"1000 the console user's)")
    if manifest.boot is not None and (manifest.program is None or manifest.placement is None):
        raise error(f"{interface.path}: a server started at boot needs 'program FOLDER' and "
                    f"'placement KEY'")
    if manifest.placement == "app":
        raise error(f"{interface.path}: 'app' is the placement key of applications")


def check_all(interfaces, error):
    """Checks each server's lines, and that boot orders and keys do not collide."""
    for interface in interfaces:
        check_one(interface, error)
    servers = boot_servers(interfaces)
    orders = [interface.manifest.boot for interface in servers]
    if orders != list(range(1, len(servers) + 1)):
        raise error(f"boot orders must be 1..{len(servers)} once each, found {orders}")
    keys = [interface.manifest.placement for interface in servers]
    if len(set(keys)) != len(keys):
        raise error(f"two servers share a placement key: {keys}")
    for interface in servers:
        beside = interface.manifest.beside
        if beside is not None and (beside not in keys or beside == interface.manifest.placement):
            raise error(f"{interface.path}: 'beside {beside}' names no other server's placement key")


def boot_servers(interfaces):
    """The servers init starts at boot, in their start order."""
    started = [interface for interface in interfaces if interface.manifest.boot is not None]
    return sorted(started, key=lambda interface: interface.manifest.boot)


def enum_name(interface):
    return f"SERVER_{interface.name.upper()}"


def quoted(names):
    return ", ".join(f'"{name}"' for name in names)


def c_flags(values):
    return ", ".join("1" if value else "0" for value in values)


def servers_header(interfaces):
    servers = boot_servers(interfaces)
    keys = [interface.manifest.placement for interface in servers]
    reserved = [interface.server for interface in interfaces if interface.manifest.reserved]
    lines = ["/* Generated by build/protocol.py from the server lines of the protocol/NAME.messages",
             " * files: do not edit. The servers init starts at boot, in their start order, and",
             " * the names only a process with RIGHT_RESERVED_NAME may register. */",
             "#pragma once", "", "enum placement_server {"]
    lines += [f"    {enum_name(interface)}, /* \"{interface.server}\": {interface.path} */"
              for interface in servers]
    lines += ["    PLACEMENT_SERVERS", "};", "",
              "/* The placement-file key naming each one's core, in enum placement_server's order. */",
              f"#define PLACEMENT_SERVER_KEYS {quoted(i.manifest.placement for i in servers)}",
              "/* Whether each may run as several instances: its key may name a list of cores or",
              " * per-core (docs/placement.md); 0: one core only. */",
              f"#define PLACEMENT_SERVER_INSTANCES {c_flags(i.manifest.instances for i in servers)}",
              "/* Whether each is optional: started only when the placement names its key. */",
              f"#define PLACEMENT_SERVER_OPTIONAL {c_flags(i.manifest.optional for i in servers)}",
              "/* The server whose core each takes when the placement does not name it (the",
              " * index of enum placement_server), or -1: core 0. */",
              "#define PLACEMENT_SERVER_BESIDE " + ", ".join(
                  str(keys.index(i.manifest.beside)) if i.manifest.beside else "-1" for i in servers),
              "/* The uid (and gid) each runs as: its own files (docs/authority.md). */"]
    lines += [f"#define USER_{interface.name.upper()} {interface.manifest.user or 0}" for interface in servers]
    lines += ["/* The reserved names (mkernel/authority.c). */",
              f"#define RESERVED_SERVER_NAMES {quoted(reserved)}",
              f"#define RESERVED_SERVER_COUNT {len(reserved)}"]
    return lines


def rights_expression(manifest):
    rights = (["reserved_name"] if manifest.reserved else []) + \
        [right for right in manifest.rights if right != "reserved_name"]
    return " | ".join(f"RIGHT_{right.upper()}" for right in rights) or "0"


def boot_servers_header(interfaces):
    lines = ["/* Generated by build/protocol.py from the server lines of the protocol/NAME.messages",
             " * files: do not edit. How init starts and restarts each server (apps/init). */",
             "#pragma once", "#include <formica/rights.h>", "#include <formica/syscalls.h>",
             "#include <stdint.h>", "",
             "struct boot_server {",
             "    const char *name;       /* its program in the boot image, and the name it registers */",
             "    uint32_t flags;         /* SPAWN_* */",
             "    uint32_t rights;        /* RIGHT_* */",
             "    uint32_t user;          /* its uid and gid (docs/authority.md) */",
             "    uint32_t restart_limit; /* restarted when it ends, at most this often (0: never) */",
             "    uint32_t instances;     /* 1: it may run as several instances (--instance I/N) */",
             "    uint32_t optional;      /* 1: started only when the placement names its key */",
             "};", "",
             "static const struct boot_server boot_servers[PLACEMENT_SERVERS] = {"]
    for interface in boot_servers(interfaces):
        manifest = interface.manifest
        flags = " | ".join(SPAWN_FLAGS[flag] for flag in manifest.spawn) or "0"
        lines.append(f"    [{enum_name(interface)}] = {{.name = \"{interface.server}\", "
                     f".flags = {flags}, .rights = {rights_expression(manifest)}, "
                     f".user = {manifest.user or 0}, "
                     f".restart_limit = {manifest.restart}, "
                     f".instances = {int(manifest.instances)}, .optional = {int(manifest.optional)}}},")
    lines.append("};")
    return lines


def servers_makefile(interfaces):
    """build/user.mk's list entries NAME:FOLDER for every server with a program line."""
    programs = [f"{i.server}:{i.manifest.program}" for i in interfaces if i.manifest.program]
    return ["# Generated by build/protocol.py from the program lines of protocol/*.messages:",
            "# do not edit. Included by build/user.mk.",
            f"SERVER_PROGRAMS := {' '.join(programs)}"]


def outputs(interfaces):
    """Path (under the output folder) -> lines."""
    return {"formica/protocol/servers.h": servers_header(interfaces),
            "formica/protocol/boot_servers.h": boot_servers_header(interfaces),
            "servers.mk": servers_makefile(interfaces)}


def docs_line(interface):
    """The reference page's sentence about a server, or None."""
    manifest = interface.manifest
    if interface.server is None:
        return None
    parts = [f"Registers the name `{interface.server}`"
             + (" (reserved: only a process with RIGHT_RESERVED_NAME may)" if manifest.reserved
                else "")]
    if manifest.program:
        parts.append(f"program `{manifest.program}/`")
    if manifest.boot is not None:
        flags = ", ".join(SPAWN_FLAGS[flag] for flag in manifest.spawn) or "no spawn flags"
        parts.append(f"started by init at boot (start order {manifest.boot}) on the core of placement key "
                     f"`{manifest.placement}`, as uid and gid {manifest.user or 0}, "
                     f"with {rights_expression(manifest)} and {flags}, "
                     f"restarted up to {manifest.restart} times")
        if manifest.optional:
            parts.append("only when the placement names its key")
        parts.append("as several instances when the placement gives its key a list of cores or "
                     "`per-core`" if manifest.instances else "as one instance (its key takes one core)")
    return "; ".join(parts) + "."
