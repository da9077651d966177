"""`torchish.Generator` and the default generator: PyTorch's CPU generator, bit for bit.

The algorithm lives in `_random_engine.py` (NumPy, on the host). A generator's values are
produced there and placed on the tensor's device, so a CUDA tensor gets the same numbers as a
CPU one (PyTorch's own CUDA generator - Philox - gives different numbers; torchish does not
reproduce it). Inside traced code see `_random_trace.py`.

The default generator is per thread where a DataLoader worker thread installs its own
(`worker_generator`): in PyTorch each worker process has its own default generator, seeded
`base_seed + worker_id`, so random draws in a dataset's `__getitem__` neither come from nor
advance the main process's stream.
"""
import contextlib
import os
import threading

import numpy as np

from ._random_engine import MT19937Engine
from ._device import device as _device

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "fork_rng"]


class Generator:
    def __init__(self, device="cpu"):
        self._engine = MT19937Engine()
        self.device = _device(device)

    def __getattr__(self, name):
        raise AttributeError(f"'torch._C.Generator' object has no attribute '{name}'")

    def manual_seed(self, seed):
        # the method takes a Python int alone (`torch.manual_seed` converts with int() first)
        if not isinstance(seed, int) or isinstance(seed, bool):
            if isinstance(seed, np.integer):
                raise TypeError("an integer is required")
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        self._engine.manual_seed(seed)
        return self

    def seed(self):
        return self._engine.seed()

    def initial_seed(self):
        return self._engine.initial_seed()

    def get_state(self):
        from ._ops.creation_data import tensor   # (a copy: the engine's state moves on)
        return tensor(np.array(self._engine.get_state(), dtype=np.uint8))

    def set_state(self, new_state):
        from ._tensor import Tensor
        if not isinstance(new_state, Tensor):
            kind = type(new_state)
            name = kind.__qualname__ if kind.__module__ == "builtins" else \
                f"{kind.__module__}.{kind.__qualname__}"
            raise TypeError(f"expected a torch.ByteTensor, but got {name}")
        if new_state.dtype.name != "uint8":
            raise TypeError("RNG state must be a torch.ByteTensor")
        self._engine.set_state(np.asarray(new_state.detach()._data, dtype=np.uint8))
        return self

    def clone_state(self):
        g = Generator(self.device)
        g._engine = self._engine.clone()
        return g

    def __reduce__(self):
        return (_rebuild_generator, (bytes(self._engine.get_state()),))


# PyTorch's class is the C extension's: `type(g)` prints <class 'torch._C.Generator'> (the
# module-name aliasing leaves a class whose __module__ is not its defining module's alone)
Generator.__module__ = "torch._C"


def _rebuild_generator(state):
    g = Generator()
    g._engine.set_state(np.frombuffer(state, dtype=np.uint8))
    return g


default_generator = Generator()
# PyTorch seeds the default generator from the OS at start-up.
default_generator._engine.manual_seed(int.from_bytes(os.urandom(8), "little"))


_thread = threading.local()


def current_default():
    """The default generator of the calling thread (a DataLoader worker's own, else the
    process's `default_generator`)."""
    return getattr(_thread, "generator", None) or default_generator


def set_worker_generator(generator):
    """Make `generator` the calling thread's default generator (a DataLoader worker thread)."""
    _thread.generator = generator


def manual_seed(seed):
    return current_default().manual_seed(int(seed))


def seed():
    return current_default().seed()


def initial_seed():
    return current_default().initial_seed()


def get_rng_state():
    return current_default().get_state()


def set_rng_state(new_state):
    current_default().set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    if not enabled:
        yield
        return
    engine = current_default()._engine
    state = engine.get_state()
    try:
        yield
    finally:
        engine.set_state(state)


def engine_of(generator):
    return (generator or getattr(_thread, "generator", None) or default_generator)._engine


from ._unsupported import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)
