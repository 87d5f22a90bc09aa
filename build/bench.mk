# bench.mk: `make bench`: benchmarks whose results go to build/out/bench/ (CSV, JSON,
# PNG, markdown). Included by the top-level Makefile. BENCH_RUNS sets the repetitions.
# `make bench` runs ipcbench, the pager benchmark, the ext2/ext3 journal cost
# (build/bench/journal_bench.py, docs/journal.md), a normal program beside other
# accounts' attacks (build/bench/fair_share.py, docs/authority.md), then the Bonnie evaluation
# (build/bench/evaluate.py, docs/evaluation.md); `make bench QUICK=1` or
# `make bench-quick`: one ipcbench run, no pager benchmark, one journal run, the
# evaluation's quick matrix. Every script here also takes --smoke (its set-up and one boot of
# each kind at the smallest size), which make test runs (tests/integration/test_bench_smoke.py).
.PHONY: bench bench-quick bench-pager bench-bonnie bench-journal bench-scale bench-fair
EVALUATE_FLAGS = $(if $(QUICK),--quick) $(if $(BENCH_RUNS),--runs $(BENCH_RUNS))
bench: deps all
	python3 build/bench/ipcbench.py $(if $(QUICK),--runs 1)
	$(if $(QUICK),,python3 build/bench/pager_bench.py)
	python3 build/bench/journal_bench.py $(if $(QUICK),--runs 1,$(if $(BENCH_RUNS),--runs $(BENCH_RUNS)))
	$(if $(QUICK),,python3 build/bench/fair_share.py $(if $(BENCH_RUNS),--runs $(BENCH_RUNS)))
	python3 build/bench/evaluate.py $(EVALUATE_FLAGS)

bench-quick:
	$(MAKE) bench QUICK=1

# The remote pager alone (build/bench/pager_bench.py, docs/pager.md), then the pager against
# Linux swap (build/bench/pager_vs_linux.py); PAGER_FLAGS passes options, e.g.
# PAGER_FLAGS=--only-vs-linux or PAGER_FLAGS="--records 20000 --ratios 4".
bench-pager: deps all
	python3 build/bench/pager_bench.py $(PAGER_FLAGS)

# ext2 against ext3 alone (build/bench/journal_bench.py, docs/journal.md).
bench-journal: deps all
	python3 build/bench/journal_bench.py $(if $(BENCH_RUNS),--runs $(BENCH_RUNS))

# A normal program's slowdown beside each attack of another account (build/bench/fair_share.py,
# docs/authority.md, "How much an attack slows others"); FAIR_FLAGS passes options, e.g.
# FAIR_FLAGS="--attacks disk_fill,core_hog --runs 5".
bench-fair: deps all
	python3 build/bench/fair_share.py $(if $(BENCH_RUNS),--runs $(BENCH_RUNS)) $(FAIR_FLAGS)

# A memory node's local work beside a client swapping to it, DRAM and NVM stores, remote_share
# 0.25/0.5/0.75, from the node's cycle counts (build/bench/memnode_interference.py,
# docs/memnode.md, "A node that also works"); MEMNODE_FLAGS passes options, e.g. "--runs 3".
.PHONY: bench-memnode
bench-memnode: deps all
	python3 build/bench/memnode_interference.py $(if $(BENCH_RUNS),--runs $(BENCH_RUNS)) $(MEMNODE_FLAGS)

# The Bonnie evaluation alone (ipcbench's results, if present, join its report).
bench-bonnie: deps all
	python3 build/bench/evaluate.py $(EVALUATE_FLAGS)

# The inter-core area's size and the boot time at 16, 64, 128 and 256 cores
# (build/bench/cores_scaling.py, docs/intercore.md); several minutes under TCG.
.PHONY: bench-cores
bench-cores: deps all
	python3 build/bench/cores_scaling.py

# Bonnie's throughput with 1..max(16, host cores) processes on all the host's cores,
# Formica's placements beside Linux (build/bench/scale.py, docs/evaluation.md,
# "Scaling"); SCALE_FLAGS passes options, e.g. SCALE_FLAGS=--quick.
bench-scale: deps all
	python3 build/bench/scale.py $(if $(BENCH_RUNS),--runs $(BENCH_RUNS)) $(SCALE_FLAGS)

# Seed 000's workloads over malloc-swap, mmap, flmalloc and DRAM (build/bench/flash_bench.py,
# docs/files.md "flashbench"); FLASH_FLAGS passes options, e.g. FLASH_FLAGS="--data-mib 24
# --local-mib 8". Prints @json {"kind":"flash",...} lines and writes docs/results/flash.md,
# flash.json and flash.png (and build/out/bench/); not part of `make bench`.
.PHONY: bench-flash
bench-flash: deps all
	python3 build/bench/flash_bench.py --results docs/results $(if $(BENCH_RUNS),--runs $(BENCH_RUNS)) $(FLASH_FLAGS)
# Seed 001's NVM tier beside Linux's dm-writecache and ext4 (build/bench/vems.py, docs/storage.md,
# "The NVM tier"): apps/fileio's patterns through the tier, the plain disk path and Linux, on the
# disk as it is and throttled to a hard disk's rate; QUICK=1 for files of 8 and 32 MiB, one run.
.PHONY: bench-vems
bench-vems: deps all
	python3 build/bench/vems.py $(if $(QUICK),--quick) $(if $(BENCH_RUNS),--runs $(BENCH_RUNS))

# Bonnie by the clock beside Linux (build/bench/clock.py, docs/profiling.md "By the clock"):
# readblock and readbyte, 1 and 2 processes, 128 KiB and 4 MiB files, 2 vCPUs, every placement
# that fits them, fixed and adaptive poll; QUICK=1 for 3 alternating runs instead of 5.
.PHONY: bench-clock
bench-clock: deps all
	python3 build/bench/clock.py $(if $(QUICK),--quick) $(if $(BENCH_RUNS),--runs $(BENCH_RUNS))

# The papers' page (build/bench/papers.py, docs/evaluation.md, "The papers' page"): every
# figure of seeds 003 and 004 with the paper's number, Formica's on this tree and Linux's in the
# same QEMU, written to docs/results/papers.md with its plots; QUICK=1 for smaller sizes and one
# run per timed point (tens of minutes on 2 cores), the full one takes hours.
.PHONY: bench-papers
bench-papers: deps all
	python3 build/bench/papers.py $(if $(QUICK),--quick) $(if $(BENCH_RUNS),--runs $(BENCH_RUNS)) --page docs/results/papers.md
