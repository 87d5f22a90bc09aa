# The ICA wing's layer check (build/check-ica-layers, `make layer-check`): it passes on
# the built tree, and fails, naming what is wrong, when an upward call, include or
# declaration is planted, when the scheduler calls into the wing, and when another
# kernel file calls a function of it that is not an entry point. No QEMU; needs
# `make all` (the objects under build/out/obj).
import shutil

import formica

WING = formica.REPO_ROOT / "kernel" / "ica"


def check(*arguments):
    return formica.run_check("check-ica-layers", *arguments)


planted_call = formica.planted_call


def test_the_wing_depends_downward_only():
    result = check()
    assert result.returncode == 0, result.stderr


def test_an_upward_call_fails(tmp_path):
    result = check("--plant", f"ica_room.c={planted_call(tmp_path, 'ica_fast_path')}")
    assert result.returncode == 1
    assert "(ica_room.c, poll) calls ica_fast_path of ica_fastpath.c (entry, a higher layer)" in result.stderr


def test_a_call_within_a_layer_and_downward_passes(tmp_path):
    result = check("--plant", f"ica_room.c={planted_call(tmp_path, 'ica_poll_hand_wake')}",
                   "--plant", f"ica_across.c={planted_call(tmp_path, 'ica_peel')}")
    assert result.returncode == 0, result.stderr


def test_the_scheduler_calling_the_wing_fails(tmp_path):
    result = check("--plant", f"kernel/scheduler.c={planted_call(tmp_path, 'ica_poll_adapt')}")
    assert result.returncode == 1
    assert "kernel/scheduler.o is below the wing and calls ica_poll_adapt" in result.stderr


def test_a_call_into_the_wing_that_is_no_entry_point_fails(tmp_path):
    result = check("--plant", f"kernel/console.c={planted_call(tmp_path, 'ica_collect_result')}")
    assert result.returncode == 1
    assert "kernel/console.o calls ica_collect_result of ica_syscalls.c, which is not an entry point" \
        in result.stderr


def test_an_upward_include_or_declaration_fails(tmp_path):
    copy = tmp_path / "ica"
    shutil.copytree(WING, copy)
    with open(copy / "ica_handover.h", "a") as header:
        header.write('#include "ica_syscalls.h"\n')
    with open(copy / "ica_wait.h", "a") as header:
        header.write("long ica_receive_until(uint32_t flags,\n                       uint64_t wake_tick);\n")
    result = check("--ica-dir", str(copy))
    assert result.returncode == 1
    assert "ica_handover.h (handover) includes ica_syscalls.h (general, a higher layer)" in result.stderr
    assert "ica_wait.h (rendezvous) declares ica_receive_until of ica_syscalls.c" in result.stderr


def test_a_file_in_no_layer_fails(tmp_path):
    copy = tmp_path / "ica"
    shutil.copytree(WING, copy)
    (copy / "ica_extra.h").write_text("#pragma once\n")
    result = check("--ica-dir", str(copy))
    assert result.returncode == 1
    assert "kernel/ica/ica_extra.h is in no layer of kernel/ica/layers" in result.stderr
