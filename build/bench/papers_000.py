# build/bench/papers_000.py: seed 000's rows of `make bench-papers` (papers.py): the mapped file
# against malloc over swap for STREAM (Figs 2-4) and Himeno (Fig. 5), and libflmalloc against the
# mapped file (§4), from flash_bench.py's boots: Formica and Linux in the same QEMU, one local bound.
import statistics
import tempfile

import flash_bench
from papers_page import rounded, row

# Seed 000's numbers (§3.2, §3.3, §4): past physical memory, STREAM's bandwidth with mmap over
# malloc's (241.4 MiB/s against 655.6 MiB/s at 3.2 G elements), Himeno's FLOPS with mmap over
# malloc (2-2.5x on every kernel), and Himeno through libflmalloc over all-mmap (106 %).
PAPER_000 = {"stream": 2.7, "himeno": "2-2.5", "flmalloc_himeno": 1.06}
FIGURES = {"stream": "Figs 2-4", "himeno": "Fig. 5", "fio": "FIO"}
# flash_bench's sizes per papers.py size: full is bench-flash's own defaults.
FLASH_ARGUMENTS = {"full": [], "quick": ["--runs", "1"], "smoke": ["--smoke"]}


def measure(options):
    """flash_bench's medians per (system, workload, method), and its settings."""
    settings = flash_bench.arguments(FLASH_ARGUMENTS[options.size]
                                     + (["--systems", "formica"] if options.no_linux else []))
    settings.timeout = max(settings.timeout, options.timeout)
    with tempfile.TemporaryDirectory(prefix="formica-papers-000-") as scratch:
        samples = flash_bench.measure(settings, scratch)
    medians = [{"system": system, "workload": workload, "method": method,
                "seconds": statistics.median(line["seconds"] for line in lines)}
               for (system, workload, method), lines in sorted(samples.items())]
    return {"medians": medians, "data_mib": settings.data_mib, "local_mib": settings.local_mib,
            "runs": settings.runs}


def seconds_of(measured, system, workload, method):
    for line in measured["medians"]:
        if (line["system"], line["workload"], line["method"]) == (system, workload, method):
            return line["seconds"]
    return None


def over(top, bottom):
    return rounded(top / bottom) if top and bottom else None


def speedup(measured, system, workload, slow, fast):
    """How many times faster `fast` ran than `slow` (time over time: the paper's bandwidth and
    FLOPS ratios)."""
    return over(seconds_of(measured, system, workload, slow), seconds_of(measured, system, workload, fast))


def rows(options, measured):
    extra = dict(data_mib=measured["data_mib"], local_mib=measured["local_mib"])
    result = []
    for workload in ("stream", "himeno", "fio"):
        result.append(row("000", FIGURES[workload], f"{workload}: the mapped file over malloc with swap "
                          f"({measured['data_mib']} MiB of data, {measured['local_mib']} MiB local)",
                          PAPER_000.get(workload), speedup(measured, "formica", workload, "malloc-swap", "mmap"),
                          speedup(measured, "linux", workload, "malloc-swap", "mmap"), "x", workload=workload,
                          **extra))
        result.append(row("000", "§4" if workload == "himeno" else FIGURES[workload],
                          f"{workload}: flmalloc over the mapped file", PAPER_000["flmalloc_himeno"]
                          if workload == "himeno" else None,
                          speedup(measured, "formica", workload, "mmap", "flmalloc"),
                          speedup(measured, "linux", workload, "mmap", "flmalloc"), "x", workload=workload,
                          **extra))
        for method in flash_bench.METHODS:
            result.append(row("000", FIGURES[workload], f"{workload}, {method}: seconds", None,
                              seconds_of(measured, "formica", workload, method),
                              seconds_of(measured, "linux", workload, method), "s", workload=workload,
                              method=method, **extra))
    return result

