# build/bench/papers_002.py: seed 002's rows of `make bench-papers` (papers.py): a memory node's
# local work beside remote traffic into its DRAM or NVM store (Figs 5, 6, 8), from
# memnode_interference.py's boots (`make bench-memnode`), with remote_share at 0.25, 0.5, 0.75.
import memnode_interference
from papers_page import row

# Seed 002's numbers (§3.4): the local MLC program's throughput beside remote writes, as a
# fraction of alone: 0.24 at worst with the remote writes into DCPM (Fig. 5, W5+seq+DCPM), at
# least 0.80 into DRAM; 0.18 at worst with 4 remote writers (Fig. 8); the remote side's own
# throughput fell by less than 20 % (Fig. 6).
PAPER_002 = {("Fig. 5", "nvm"): 0.24, ("Fig. 5", "dram"): ">= 0.80", "Fig. 8": 0.18, "Fig. 6": "< 20 % lower"}
# The same shape, but Formica's client count: one client machine with two swapping programs.
CLIENTS_LEFT_OUT = "1 client machine here (two memseqs); the paper's 1-4 writers are not swept"
ARGUMENTS = {"full": [], "quick": [], "smoke": ["--smoke"]}


def measure(options):
    settings = memnode_interference.parse_arguments(ARGUMENTS[options.size])
    settings.timeout = max(settings.timeout, options.timeout)
    settings.own_core_locals = []  # the paper's rows share the node's core
    return {"rows": memnode_interference.measure(settings)}


def store_name(local):
    return "NVM (--memnode-nvm)" if local == "nvm" else "DRAM"


def rows(options, measured):
    result = []
    for line in measured["rows"]:
        local, share = line["local"], line["remote_share"]
        extra = dict(local=local, remote_share=share, clients=line["clients"])
        result.append(row("002", "Fig. 5", f"the node's local program beside remote stores into its "
                          f"{store_name(local)}, remote_share {share}: fraction of alone",
                          PAPER_002[("Fig. 5", local)], line["local_fraction"], None, "fraction", **extra))
        result.append(row("002", "Fig. 6", f"remote stores and retrieves into the node's {store_name(local)}, "
                          f"remote_share {share}: the clients' bandwidth", None, line["remote_mb_per_s"], None,
                          "MB/s", **extra))
    result.append(row("002", "Fig. 8", "the worst local fraction with several remote writers", PAPER_002["Fig. 8"],
                      None, None, "fraction", flag=CLIENTS_LEFT_OUT))
    return result

