# Every benchmark of build/bench/ runs its --smoke mode (build/bench/bench_output.py): its whole
# set-up (the images, NVM files, disk copies and Linux guest it prepares, the start probes of a
# KVM series), every kind of boot it makes at the smallest size, and its outputs, written to a
# scratch folder (FORMICA_BENCH_OUT) instead of build/out/bench/. So a change that breaks
# `make bench` (journal_bench's images once left the shell's user no place to create Bonnie's
# file) fails here. The numbers mean nothing and are not looked at: only that each benchmark
# finishes and writes what its report needs.
import json
import os
import subprocess
import sys

import pytest

import formica

pytestmark = pytest.mark.usefixtures("built")

TIMEOUT = 900  # a smoke run takes 5 s to 3 min here; the host is shared and loaded


def evaluate_reaches_every_series(out):
    """The evaluation reaches every series it plans: Formica timed and icount at #1 and on 1
    vCPU, Linux timed and icount; a KVM series (or a system's part of it) that cannot run here
    is named in the report instead of waiting for its boots."""
    data = json.loads((out / "evaluate.json").read_text())
    series = {(row["system"], row["series"], row["config"]) for row in data["results"]}
    assert {("formica", "tcg", "#1"), ("formica", "tcg", "1core"), ("formica", "icount", "#1"),
            ("formica", "icount", "1core"), ("linux", "tcg", "linux"),
            ("linux", "icount", "linux")} <= series, series
    assert not data["settings"]["failed_boots"], data["settings"]["failed_boots"]
    report = (out / "evaluate.md").read_text()
    assert all(left_out in report for left_out in data["settings"]["left_out"]), report[-3000:]


def papers_has_every_figure(out):
    """The papers' page has a row for each figure of seeds 003 and 004, and a section for the
    seeds other issues add."""
    rows = json.loads((out / "papers.json").read_text())["rows"]
    figures = {(row["seed"], row["figure"]) for row in rows}
    assert {("003", f"Fig. {n}") for n in (6, 7, 8, 9, 11, 12, 13)} <= figures, figures
    assert {("004", f"Fig. {n}") for n in range(4, 10)} <= figures, figures
    assert all({"paper", "formica", "linux", "unit", "what"} <= set(row) for row in rows)
    page = (out / "papers.md").read_text()
    assert all(f"## Seed {seed}" in page for seed in ("000", "001", "002", "003", "004")), page[:2000]


def vems_has_every_system(out):
    """Every system of the NVM tier's comparison measured every pattern, with the contract's
    fields, and the tier reported its write-back runs."""
    lines = [json.loads(line) for line in (out / "vems.json").read_text().splitlines()]
    vems = [line for line in lines if line["kind"] == "vems"]
    measured = {(line["system"], line["pattern"]) for line in vems}
    systems = ("formica", "formica-no-tier", "linux-dm-writecache", "linux-ext4")
    patterns = ("seq-write", "seq-read", "rand-read", "rand-write-fsync")
    assert {(s, p) for s in systems for p in patterns} <= measured, measured
    fields = {"system", "pattern", "file_mb", "mb_per_s", "readahead", "tier_mb", "disk_iops"}
    assert all(fields <= set(line) and line["mb_per_s"] > 0 for line in vems), vems
    assert any(line["kind"] == "vems_tier" and line["writeback_runs"] for line in lines), lines


def flash_has_both_systems(out):
    """Seed 000's workloads ran every method on Formica and in the Linux guest, verified, and the
    report has the issue's ratios."""
    data = json.loads((out / "flash.json").read_text())
    measured = {(r["system"], r["workload"], r["method"]) for r in data["results"] if r["verified"]}
    assert {(s, w, m) for s in ("formica", "linux") for w in ("fio", "stream", "himeno")
            for m in ("malloc-swap", "mmap", "flmalloc", "dram")} <= measured, measured
    assert all(row["swap_over_mmap"] and row["linux_mmap_over_formica_mmap"]
               for row in data["goals"]), data["goals"]
    assert "Linux mmap / Formica mmap" in (out / "flash.md").read_text()


# benchmark: (its script, the files it writes, @json kinds it prints, a further check or None)
BENCHMARKS = {
    "ipcbench": ("ipcbench.py", ["ipcbench.json", "ipcbench.csv", "ipcbench.md"], [], None),
    "journal": ("journal_bench.py", ["journal.json", "journal.md"], ["journal_bench"], None),
    "fair_share": ("fair_share.py", ["fair_share.json", "fair_share.md"], ["bench_fair"], None),
    "evaluate": ("evaluate.py", ["evaluate.json", "evaluate.csv", "evaluate.md"], [],
                 evaluate_reaches_every_series),
    "pager": ("pager_bench.py",
              ["pager.json", "pager.csv", "pager.md", "pager_vs_linux.json", "pager_vs_linux.md"],
              ["sort", "memseq", "pager_bench_node", "pager_vs_linux", "pager_vs_linux_kvm"], None),
    "scale": ("scale.py", ["scale.json", "scale.md"], ["bench_scale"], None),
    "memnode": ("memnode_interference.py", ["memnode.json", "memnode.md"],
                ["memnode_interference"], None),
    "cores_scaling": ("cores_scaling.py", ["cores_scaling.json", "cores_scaling.md"],
                      ["cores_scaling"], None),
    "flash": ("flash_bench.py", ["flash.json", "flash.md", "flash.png"], ["flash"], flash_has_both_systems),
    "papers": ("papers.py", ["papers.json", "papers.md"], ["paper"], papers_has_every_figure),
    "clock": ("clock.py", ["clock.json", "clock.md"], ["clock"], None),
    "vems": ("vems.py", ["vems.json", "vems.md", "vems.png"], ["vems", "vems_tier"], vems_has_every_system),
}


def smoke(script, out):
    environment = dict(os.environ, FORMICA_BENCH_OUT=str(out))
    return subprocess.run([sys.executable, f"build/bench/{script}", "--smoke"], cwd=formica.REPO_ROOT,
                          env=environment, capture_output=True, text=True, timeout=TIMEOUT)


def json_kinds(text):
    return {result["kind"] for result in formica.parse_json_lines(text.splitlines())}


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_benchmark_smoke_run(name, tmp_path):
    script, files, kinds, check = BENCHMARKS[name]
    built_disk = formica.OUT_DIR / "disk.img"
    disk_written = built_disk.stat().st_mtime_ns
    done = smoke(script, tmp_path)
    assert done.returncode == 0, f"{script} --smoke: exit {done.returncode}\n{done.stdout[-6000:]}\n" \
                                 f"{done.stderr[-4000:]}"
    missing = [file for file in files if not (tmp_path / file).is_file()]
    assert not missing, f"{script} --smoke wrote no {missing}: {sorted(p.name for p in tmp_path.iterdir())}"
    assert set(kinds) <= json_kinds(done.stdout), done.stdout[-6000:]
    # every boot had a disk of its own: the build's image, which the tests copy, is as built
    assert built_disk.stat().st_mtime_ns == disk_written, f"{script} --smoke wrote {built_disk}"
    if check:
        check(tmp_path)
