# bench.mk: `make bench`: benchmarks whose results go to build/out/bench/ (CSV, JSON,
# PNG, markdown). Included by the top-level Makefile. BENCH_RUNS sets the repetitions.
.PHONY: bench
bench: deps all
	python3 build/bench/ipcbench.py

# The remote pager (build/bench/pager_bench.py, docs/pager.md).
.PHONY: bench-pager
bench-pager: deps all
	python3 build/bench/pager_bench.py
bench: bench-pager
