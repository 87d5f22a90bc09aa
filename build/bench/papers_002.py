# build/bench/papers_002.py: seed 002's rows of `make bench-papers` (papers.py): a memory node's
# local STREAM on its DRAM or NVM beside remote traffic into its NVM store (Figs 5, 6, 8), from
# memnode_interference.py's boots (`make bench-memnode`), with the scheduler off for serving (the
# paper's node, which does not schedule remote traffic), at the default remote_share (0.1) and at
# 0.25, 0.5, 0.75, and 1-2 client machines.
import memnode_interference
from papers_page import row

# Seed 002's numbers (§3.4): the local MLC program's throughput beside remote writes, as a
# fraction of alone with the remote writes into DCPM: about a fifth whether the local program
# reads and writes DRAM or DCPM (Fig. 5: 0.24 at worst on DCPM, 1/5 on DRAM); 0.18 at worst with
# 4 remote writers (Fig. 8); the remote side's own throughput fell by less than 20 % (Fig. 6).
PAPER_002 = {("Fig. 5", "nvm"): 0.24, ("Fig. 5", "dram"): 0.20, "Fig. 8": 0.18, "Fig. 6": "< 20 % lower"}
# What this host measures: 1 and 2 client machines (two memseqs each); 3 and 4 boot too (a smoke
# run of 4 did) but are left to `make bench-memnode MEMNODE_FLAGS="--clients 1,2,3,4"`.
CLIENTS_LEFT_OUT = "1-2 client machines here (two memseqs each); 3-4 not measured on this host"
# QUICK: the paper's node (serving not held back) beside the default and one weight
ARGUMENTS = {"full": [], "quick": ["--shares", "off,default,0.25"], "smoke": ["--smoke"]}


def measure(options):
    settings = memnode_interference.parse_arguments(ARGUMENTS[options.size])
    settings.timeout = max(settings.timeout, options.timeout)
    settings.own_core_locals = []  # the paper's rows share the node's core
    return {"rows": memnode_interference.measure(settings)}


def memory_name(local):
    return "local NVDIMM (--memnode-local-nvm)" if local == "nvm" else "DRAM"


def rows(options, measured):
    result = []
    for line in measured["rows"]:
        local, share = line["local"], line["remote_share"]
        extra = dict(local=local, remote_share=share, clients=line["clients"])
        share = "off (serving not scheduled)" if line.get("scheduler") == "off" else share
        clients = line["clients"]
        result.append(row("002", "Fig. 5", f"the node's STREAM on its {memory_name(local)} beside "
                          f"{clients} client machine(s) swapping into its NVM store, remote_share "
                          f"{share}: fraction of alone",
                          PAPER_002[("Fig. 5", local)], line["local_fraction"], None, "fraction", **extra))
        result.append(row("002", "Fig. 6", f"{clients} client machine(s) swapping into the node's NVM "
                          f"store beside its STREAM on {memory_name(local)}, remote_share {share}: "
                          "the clients' bandwidth", None, line["remote_mb_per_s"], None,
                          "MB/s", **extra))
    several = [line["local_fraction"] for line in measured["rows"] if line["clients"] > 1]
    result.append(row("002", "Fig. 8", "the worst local fraction with several client machines",
                      PAPER_002["Fig. 8"], min(several) if several else None, None, "fraction",
                      flag=CLIENTS_LEFT_OUT))
    return result

