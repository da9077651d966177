"""`torchish.distributed`: a process group of one.

`init_process_group` succeeds when the job has a single process (world size 1: the default,
or `WORLD_SIZE=1` from a launcher) so that code written for DDP runs unchanged; collectives
over one process leave their tensors as they are. Several processes are not supported: JAX
shards a computation over devices instead (`jax.sharding`).
"""
import enum
import os

from ._unsupported import module_getattr

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to "
                    "call init_process_group.")
_state = {"backend": None}


class ReduceOp(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __repr__(self):
        return f"<RedOpType.{self.name}: {self.value}>"

    __str__ = lambda self: f"RedOpType.{self.name}"  # noqa: E731


class Backend(str):
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UNDEFINED = "undefined"


class Work:
    """What an `async_op=True` collective returns; a single process has nothing to wait for."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True


group = type("group", (), {"WORLD": None})


def is_available():
    return True


def is_initialized():
    return _state["backend"] is not None


def is_torchelastic_launched():
    return os.environ.get("TORCHELASTIC_RUN_ID") is not None


def _check_initialized():
    if not is_initialized():
        raise ValueError(_NOT_INITIALIZED)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    if world_size == -1:
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if rank == -1:
        rank = int(os.environ.get("RANK", "0"))
    if world_size != 1 or rank != 0:
        raise NotImplementedError(
            f"torchish.distributed runs a single process (world_size 1), got world_size "
            f"{world_size}, rank {rank}; shard over devices with JAX instead")
    _state["backend"] = str(backend or "gloo").split(":")[-1]


def destroy_process_group(group=None):
    _state["backend"] = None


def get_backend(group=None):
    _check_initialized()
    return _state["backend"]


def get_rank(group=None):
    _check_initialized()
    return 0


def get_world_size(group=None):
    _check_initialized()
    return 1


def get_local_rank():
    return 0


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, **kwargs):
    _check_initialized()
    return group.WORLD


def _collective(*args, async_op=False, **kwargs):
    """Any collective over a group of one: every tensor already holds the result."""
    _check_initialized()
    return Work() if async_op else None


def barrier(group=None, async_op=False, device_ids=None):
    return _collective(async_op=async_op)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    return _collective(async_op=async_op)


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False):
    return _collective(async_op=async_op)


def broadcast(tensor, src=0, group=None, async_op=False):
    return _collective(async_op=async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check_initialized()
    with _no_grad():
        tensor_list[0].copy_(tensor)
    return Work() if async_op else None


def all_gather_object(object_list, obj, group=None):
    _check_initialized()
    object_list[0] = obj


def broadcast_object_list(object_list, src=0, group=None, device=None):
    _check_initialized()


def _no_grad():
    from .autograd import no_grad
    return no_grad()


__getattr__ = module_getattr(__name__)
