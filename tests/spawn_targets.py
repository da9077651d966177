"""Functions the tests run in spawned processes. A spawned child imports the module that
defines its function: this one imports only torchish (a test module would also import
PyTorch, the oracle, in every child)."""
import torchish


def put_rank_sum(rank, queue):
    queue.put((rank, torchish.tensor([rank, rank * 2]).sum().item()))


def raise_for_rank(rank):
    raise ValueError(f"rank {rank} failed")
