"""A DDP-style script for one process: init, wrap, collectives, no_sync, teardown (run by
tests/test_distributed.py under PyTorch and under torchish)."""
import os, sys
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
os.environ.setdefault("MASTER_ADDR", "127.0.0.1"); os.environ.setdefault("MASTER_PORT", "29535")
for f in (lambda: dist.get_rank(), lambda: DDP(torch.nn.Linear(2, 2))):
    try: f()
    except Exception as e: print(type(e).__name__, e)
print(dist.is_available(), dist.is_initialized())
dist.init_process_group(backend="gloo", rank=0, world_size=1)
print(dist.is_initialized(), dist.get_rank(), dist.get_world_size(), dist.get_backend())
torch.manual_seed(0)
m = DDP(torch.nn.Linear(3, 2))
print(m); print(list(m.state_dict()))
x = torch.ones(3); print(dist.all_reduce(x, op=dist.ReduceOp.SUM), x)
w = dist.all_reduce(x, async_op=True); w.wait()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
with m.no_sync():
    m(torch.ones(4, 3)).sum().backward()
m(torch.ones(4, 3)).sum().backward(); opt.step()
print(m.module.weight)
dist.barrier()
dist.destroy_process_group(); print(dist.is_initialized())
print(torch.nn.DataParallel(torch.nn.Linear(2, 2)))
