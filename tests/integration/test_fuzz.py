# The system-call and ICA fuzzer (tests/programs/fuzz, docs/fuzzing.md) run from the shell as an
# ordinary program: a warm-up run, then 100,000 calls over several seeds. Every call must give
# a value or an error code (no "fuzz_anomaly" line, no panic, no fault of the fuzzer, no hang:
# the runner's timeout); afterwards the kernel's counts of frames, ICAs and process slots equal
# the warm-up's exactly, files still work and e2fsck -fn finds the disk clean.
# FORMICA_FUZZ_CALLS=N (make fuzz-soak: 1,000,000) changes the total.
import os
import shutil
import subprocess

from formica import OUT_DIR, run

SEEDS = [11, 22, 33, 44]
TOTAL_CALLS = int(os.environ.get("FORMICA_FUZZ_CALLS", "100000"))
WARM_UP_CALLS = 3000
LEAK_FIELDS = ["other_frames", "control_icas", "data_icas", "block_icas", "processes"]


def fuzz_commands(seeds, total):
    per_seed = total // len(seeds)
    return [f"run fuzz --seed {seed} --calls {per_seed}" for seed in seeds]


def test_fuzzer_finds_no_panic_hang_or_leak(built, tmp_path):
    image = tmp_path / "disk.img"
    shutil.copyfile(OUT_DIR / "disk.img", image)
    commands = [f"run fuzz --seed 7 --calls {WARM_UP_CALLS}", "run fuzz --clean", "stats",
                *fuzz_commands(SEEDS, TOTAL_CALLS), "run fuzz --clean", "stats",
                "run fstest", "cksum /hello.txt", "cp /hello.txt /after-fuzz.txt",
                "cksum /after-fuzz.txt", "rm /after-fuzz.txt", "sync"]
    timeout = 240 + TOTAL_CALLS // 100
    result = run("--smp", "2", "--disk", str(image), "--cmd", "; ".join(commands),
                 timeout=timeout)
    described = result.describe()
    assert not result.kinds("fuzz_anomaly"), described
    assert "killed by" not in result.text, described  # neither the fuzzer nor a server faulted
    runs = result.kinds("fuzz")
    assert len(runs) == 1 + len(SEEDS), described
    assert sum(entry["calls"] for entry in runs[1:]) >= TOTAL_CALLS - len(SEEDS), described
    assert all(entry["anomalies"] == 0 for entry in runs), described
    baseline, after = result.kinds("stats")
    assert {key: after[key] for key in LEAK_FIELDS} == {key: baseline[key] for key in LEAK_FIELDS}, \
        f"leak: before {baseline}, after {after}\n{described}"
    cases = result.kinds("fstest")
    assert cases and all(case["ok"] for case in cases), described
    sums = [line for line in result.lines if line.endswith(("/hello.txt", "/after-fuzz.txt"))
            and line[0].isdigit()]
    assert len(sums) == 2 and sums[0].split()[:2] == sums[1].split()[:2], described
    assert result.rc == 0, described
    check = subprocess.run(["e2fsck", "-fn", str(image)], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
