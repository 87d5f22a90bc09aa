# The kernel's circle check (build/check-kernel-circles, `make layer-check`): it
# passes on the built tree, fails naming the circle when a back edge is planted,
# and fails when an allowed edge of build/kernel-circles is no edge any more.
# No QEMU; needs `make all` (the objects under build/out/obj).

import formica

ALLOWED = formica.REPO_ROOT / "build" / "kernel-circles"


def check(*arguments):
    return formica.run_check("check-kernel-circles", *arguments)


planted_call = formica.planted_call


def test_the_kernel_has_no_circle_but_the_allowed_ones():
    result = check()
    assert result.returncode == 0, result.stderr


def test_a_planted_back_edge_fails(tmp_path):
    # trap_handlers.c is a leaf: registering a handler calling the scheduler closes
    # clock -> trap_handlers -> scheduler -> ... -> clock
    result = check("--plant", f"kernel/trap_handlers.c={planted_call(tmp_path, 'scheduler_yield')}")
    assert result.returncode == 1
    assert "a circle of" in result.stderr
    assert "kernel/trap_handlers -> kernel/scheduler (scheduler_yield)" in result.stderr


def test_the_scheduler_calling_up_fails(tmp_path):
    result = check("--plant", f"kernel/scheduler.c={planted_call(tmp_path, 'crash_if_requested')}")
    assert result.returncode == 1
    assert "kernel/scheduler -> kernel/crash (crash_if_requested)" in result.stderr


def test_a_downward_call_passes(tmp_path):
    result = check("--plant", f"kernel/syscall.c={planted_call(tmp_path, 'console_input_take')}")
    assert result.returncode == 0, result.stderr


def test_an_allowed_edge_that_is_gone_fails(tmp_path):
    allowed = tmp_path / "kernel-circles"
    allowed.write_text(ALLOWED.read_text() + "kernel/clock kernel/scheduler  no such call\n")
    result = check("--allowed", str(allowed))
    assert result.returncode == 1
    assert "kernel/clock kernel/scheduler is no edge of the kernel's call graph any more" in result.stderr
