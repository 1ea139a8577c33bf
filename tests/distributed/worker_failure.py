"""Rank body: the last rank fails (raises, or stops answering); the others must not hang."""
import sys
import time

import lucid
import lucid.distributed as dist

lucid.set_num_threads(1)  # the ranks share the machine
dist.init_process_group("ring", timeout=float(sys.argv[2]))
rank, n = dist.get_rank(), dist.get_world_size()
t = lucid.ones(4)
dist.all_reduce(t)  # everyone is connected
if rank == n - 1:
    if sys.argv[1] == "raise":
        raise ValueError("rank failed on purpose")
    time.sleep(600)  # "stall": alive but never joins the next collective
dist.all_reduce(t)
print("unreachable")
