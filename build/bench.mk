# bench.mk: `make bench`: benchmarks whose results go to build/out/bench/ (CSV, JSON,
# PNG, markdown). Included by the top-level Makefile. BENCH_RUNS sets the repetitions.
.PHONY: bench
bench: deps all
	python3 build/bench/ipcbench.py
