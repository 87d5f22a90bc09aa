# Authority (docs/authority.md): tests/programs/hostile tries every attack of issue 12 as an
# ordinary program the shell started; each must be refused with its error, the
# machine must keep working (files, Bonnie) and e2fsck -fn must find the disk clean.
import shutil
import subprocess

from formica import OUT_DIR, run

HOSTILE_TIMEOUT = 240


def test_every_attack_is_refused_and_the_machine_keeps_working(built, tmp_path):
    image = tmp_path / "disk.img"
    shutil.copyfile(OUT_DIR / "disk.img", image)
    result = run("--smp", "2", "--disk", str(image), "--cmd",
                 "run hostile; ls /; run bonnie -p 2 -m readblock -u 20", timeout=HOSTILE_TIMEOUT)
    cases = result.kinds("hostile")
    assert len(cases) >= 21, result.describe()
    names = {case["case"] for case in cases}
    # pagerstat's PAGER_REPORT from a child spawned without RIGHT_STATISTICS: -E_PERMISSION
    assert {"pager_report_without_statistics_right",
            "child_without_statistics_right_refused"} <= names, result.describe()
    failed = [case for case in cases if not case["ok"]]
    assert not failed, f"not refused as expected: {failed}\n{result.describe()}"
    assert result.kinds("hostile_done") == [{"kind": "hostile_done", "failures": 0}], result.describe()
    pin = result.kinds("hostile_pin")[0]
    assert pin["lent"] <= 64 and pin["copied_requests"] > 0, pin  # BLK's default lend limit
    bomb = result.kinds("hostile_bomb")[0]
    assert 0 < bomb["children"] < 256, bomb  # stopped by the account's quota, not the table
    assert result.kinds("bonnie"), result.describe()  # the servers still serve
    assert result.rc == 0, result.describe()
    check = subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_rights_are_listed_by_ps(built):
    result = run("--smp", "2", "--cmd", "ps", timeout=60)
    assert result.rc == 0, result.describe()
    processes = {entry["name"]: entry for entry in result.kinds("process")}
    assert processes, result.describe()
    assert "admin" in processes["shell"]["rights"]
    assert "block" in processes["fs"]["rights"] and "disk" not in processes["fs"]["rights"]
    assert "disk" in processes["blk"]["rights"]


def test_a_client_cannot_pin_the_cache(built, tmp_path):
    """Lent BLK blocks are never evicted: one client holding many FS_READBLOCK results gets at
    most its lend limit (blk_lend_limit, 64 by default) lent and copies beyond; another client
    still reads the same file; BLK logs the refusal."""
    image = tmp_path / "disk.img"
    shutil.copyfile(OUT_DIR / "disk.img", image)
    result = run("--smp", "2", "--disk", str(image), "--append", "blk_lend_limit=8", "--cmd",
                 "run hostile pin 8; cksum /hello.txt", timeout=120)
    assert result.rc == 0, result.describe()
    pin = result.kinds("hostile_pin")[0]
    assert pin["lent"] == 8 and pin["copied_requests"] > 0, result.describe()
    cases = {case["case"]: case for case in result.kinds("hostile")}
    assert cases["pin_cache_stopped_at_lend_limit"]["ok"], result.describe()
    assert cases["others_read_while_pinned"]["ok"], result.describe()
    assert "copying instead of lending" in result.text, result.describe()
    assert "lends of at most 8 blocks per client" in result.text, result.describe()
    check = subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def syscall_entry(image):
    """The address of `syscall_entry` in kernel image `image` (mkernel.elf or pkernel.elf)."""
    symbols = subprocess.run(["nm", str(OUT_DIR / image)], capture_output=True, text=True,
                             check=True).stdout.split("\n")
    [entry] = ["0x" + line.split()[0] for line in symbols if line.endswith(" syscall_entry")]
    return entry


# Return addresses a program may not return to: the last page below the canonical hole, the
# hole (just above it and its top half), the kernel half (docs/processes.md, "Returning to
# user mode").
REFUSED_RETURNS = ["0x7ffffffff000", "0x800000000000", "0x8000000000000000", "0xffff800000001000"]
GENERAL_PROTECTION_EXIT = 128 + 13


def test_jump_to_the_syscall_entry_with_a_bad_return_address_ends_the_program(built):
    # The same jump with RCX at or above USER_SPACE_END and a console write in RAX, on the
    # m-kernel's core and a p-kernel's: the kernel ends the program before it serves the call,
    # with its report and exit code 141, and never returns to that address (before the check
    # the write was served and the program died at the address itself, of a page fault for
    # the first and last addresses: exit code 142).
    entries = {0: syscall_entry("mkernel.elf"), 1: syscall_entry("pkernel.elf")}
    commands = [f"run hostile entry {entries[core]} {address} @{core}"
                for core in entries for address in REFUSED_RETURNS]
    result = run("--smp", "2", "--cmd", "; ".join(commands + ["run hello"]), timeout=120)
    assert "entry: the call was served" not in result.text, result.describe()
    for command in commands:
        start = result.lines.index(f"formica> {command}")
        address, core = command.split()[4], command.split()[5][1:]
        end = next((i for i in range(start + 1, len(result.lines))
                    if result.lines[i].startswith("formica> ")), len(result.lines))
        block = result.lines[start:end]
        assert any(f"core {core}: process 'hostile'" in line and
                   f"killed: return address {address} is not a user address" in line
                   for line in block), "\n".join(block)
        assert f"hostile exited with code {GENERAL_PROTECTION_EXIT}" in block, "\n".join(block)
    assert result.kinds("hello"), result.describe()  # the kernels go on


def test_jump_to_the_syscall_entry_is_only_a_system_call(built):
    # A program that jumps to the kernel's `syscall` entry (its address is in the public
    # ELF) faults there in user mode; the kernel serves that as the call in RAX, as it must
    # under a hypervisor whose `syscall` stays at privilege 3 (docs/boot.md), and gives back
    # none of the privileged flags the program asked for in R11 (IOPL 3, NT).
    symbols = subprocess.run(["nm", str(OUT_DIR / "mkernel.elf")], capture_output=True, text=True,
                             check=True).stdout.split("\n")
    [entry] = ["0x" + line.split()[0] for line in symbols if line.endswith(" syscall_entry")]
    result = run("--smp", "2", "--cmd", f"run hostile entry {entry}", timeout=60)
    assert result.rc == 0, result.describe()
    cases = {case["case"]: case for case in result.kinds("hostile")}
    assert cases["entry_jump_is_a_system_call"]["ok"], result.describe()
    assert cases["entry_jump_gives_no_privileged_flags"]["ok"], result.describe()
