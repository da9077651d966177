"""XLA's RESOURCE_EXHAUSTED becomes PyTorch's error: the CPU allocator's RuntimeError (compared
with PyTorch's on the same request) and, on an accelerator, torch.OutOfMemoryError (which
torch.cuda.OutOfMemoryError is), so `except torch.cuda.OutOfMemoryError` batch-size searches
work."""
import pytest

import torchish
from torchish._functions import out_of_memory


def _huge(m):
    return m.ones(1).expand(2 ** 31, 2 ** 10) + 1   # 8 TiB of float32


def test_cpu_allocation_failure_is_pytorchs_runtime_error():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as ours:
        _huge(torchish)
    with pytest.raises(RuntimeError) as theirs:
        _huge(torch)
    assert type(ours.value) is RuntimeError and str(ours.value) == str(theirs.value)


def test_accelerator_allocation_failure_is_out_of_memory_error():
    exc = RuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
                       "2147483648 bytes.")
    found = out_of_memory(exc, "cuda")
    assert isinstance(found, torchish.cuda.OutOfMemoryError)
    assert str(found).startswith("CUDA out of memory. Tried to allocate 2.00 GiB.")
    assert out_of_memory(RuntimeError("INTERNAL: something else"), "cuda") is None
