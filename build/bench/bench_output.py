# build/bench/bench_output.py: where every benchmark writes its results, and what its --smoke
# option means. Results go to build/out/bench/, or to the folder FORMICA_BENCH_OUT names: make
# test's smoke runs (tests/integration/test_bench_smoke.py) write there, so they never overwrite
# the results of a real `make bench`.
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("FORMICA_BENCH_OUT") or REPO / "build" / "out" / "bench")

SMOKE_HELP = ("the smallest run that still goes through everything this benchmark prepares and "
              "every kind of boot it makes, with its outputs (make test runs it: "
              "tests/integration/test_bench_smoke.py); its numbers mean nothing")


def add_smoke_option(parser):
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)
