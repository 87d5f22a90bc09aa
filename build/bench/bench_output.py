# build/bench/bench_output.py: where every benchmark writes its results, what its --smoke option
# means, and the disk of a boot that needs none of its own. Results go to build/out/bench/, or to
# the folder FORMICA_BENCH_OUT names: make test's smoke runs (tests/integration/
# test_bench_smoke.py) write there, so they never overwrite the results of a real `make bench`.
import os
import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("FORMICA_BENCH_OUT") or REPO / "build" / "out" / "bench")

SMOKE_HELP = ("the smallest run that still goes through everything this benchmark prepares and "
              "every kind of boot it makes, with its outputs (make test runs it: "
              "tests/integration/test_bench_smoke.py); its numbers mean nothing")


def add_smoke_option(parser):
    parser.add_argument("--smoke", action="store_true", help=SMOKE_HELP)


def disk_copy(directory, name="disk.img"):
    """`--disk` with a fresh copy of the build's image in `directory`, for a boot that needs no
    disk of its own: a boot of build/out/disk.img itself would write it (FS's mount does), which
    every test copies, and two such boots at once fail on QEMU's lock of the image."""
    copy = Path(directory) / name
    shutil.copyfile(REPO / "build" / "out" / "disk.img", copy)
    return ["--disk", str(copy)]
