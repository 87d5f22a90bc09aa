# bench.mk: `make bench`: benchmarks whose results go to build/out/bench/ (CSV, JSON,
# PNG, markdown). Included by the top-level Makefile. BENCH_RUNS sets the repetitions.
# `make bench` runs ipcbench, then the Bonnie evaluation (build/bench/evaluate.py,
# docs/evaluation.md); `make bench QUICK=1` or `make bench-quick` its quick matrix.
.PHONY: bench bench-quick
EVALUATE_FLAGS = $(if $(QUICK),--quick) $(if $(BENCH_RUNS),--runs $(BENCH_RUNS))
bench: deps all
	python3 build/bench/ipcbench.py $(if $(QUICK),--runs 1)
	python3 build/bench/evaluate.py $(EVALUATE_FLAGS)

bench-quick:
	$(MAKE) bench QUICK=1
