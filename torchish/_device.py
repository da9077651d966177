"""`torchish.device`: PyTorch device names mapped onto JAX devices.

`cpu` is JAX's CPU backend; `cuda` / `cuda:N` are JAX's GPU devices (NVIDIA or ROCm). A TPU, when
present, is reachable as `xla` / `tpu`. The default device follows `set_default_device`.

`TORCHISH_SIMULATED_CUDA=1` (read at import) lets a second host CPU device stand in for `cuda`,
and makes it JAX's default device as a real GPU would be: device placement (tensors on two
devices, `.cpu()`, `.numpy()` of a CUDA tensor, arrays JAX creates on its default device) can
then be tested on machines without a GPU. Numbers are the CPU's.
"""
import functools
import os

import jax

from ._dtype import missing_attribute, read_only

_SIMULATED_CUDA = os.environ.get("TORCHISH_SIMULATED_CUDA") == "1"
if _SIMULATED_CUDA:  # XLA reads its flags when the first backend starts, so before that
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                               + " --xla_force_host_platform_device_count=2")
    if len(jax.devices("cpu")) < 2:
        raise RuntimeError("TORCHISH_SIMULATED_CUDA=1: JAX started before torchish was imported, "
                           "with one host device")
    jax.config.update("jax_default_device", jax.devices("cpu")[1])

__all__ = ["device", "get_default_device", "set_default_device"]

_JAX_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "xla": "tpu", "tpu": "tpu"}


class device:
    __slots__ = ("type", "index")

    def __new__(cls, type_or_str, index=None):
        if isinstance(type_or_str, device):
            return type_or_str
        if isinstance(type_or_str, int):  # torch.device(0) means cuda:0
            type_or_str, index = "cuda", type_or_str
        elif not isinstance(type_or_str, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({type(type_or_str).__name__}), but expected one of:")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        if not type_or_str:
            raise RuntimeError("Device string must not be empty")
        name = str(type_or_str)
        if ":" in name:
            name, _, idx = name.partition(":")
            if index is not None:
                raise ValueError(f"type (string) must not include an index because index "
                                 f"was passed explicitly: {type_or_str}")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type_or_str}'")
            index = int(idx)
        if name not in _JAX_PLATFORM and name not in ("mps", "meta"):
            raise RuntimeError(
                "Expected one of cpu, cuda, xla, tpu, mps, meta device type at start of "
                f"device string: {type_or_str}")
        self = object.__new__(cls)
        object.__setattr__(self, "type", name)
        object.__setattr__(self, "index", index)
        return self

    __getattr__ = missing_attribute("torch.device")
    __setattr__ = read_only("torch.device")

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return (isinstance(other, device) and self.type == other.type
                and self.index == other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (str(self),))

    def __enter__(self):
        _entered.append(get_default_device())
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        set_default_device(_entered.pop())


@functools.lru_cache(maxsize=None)
def _platform_devices(platform):
    if _SIMULATED_CUDA and platform in ("cpu", "gpu"):
        host = jax.devices("cpu")
        return tuple(host[:1]) if platform == "cpu" else tuple(host[1:])
    try:
        return tuple(jax.devices(platform))
    except RuntimeError:
        return ()


def jax_device(dev):
    """The JAX device for a torchish device (RuntimeError, as PyTorch, when there is none)."""
    dev = device(dev)
    devs = _platform_devices(_JAX_PLATFORM.get(dev.type, dev.type))
    if not devs:
        if dev.type == "cuda":
            # (PyTorch's CPU build raises AssertionError from torch.cuda's lazy init)
            raise AssertionError("Torch not compiled with CUDA enabled\n(torchish: JAX sees "
                                 "no GPU; install jax[cuda12] on a machine with an NVIDIA GPU)")
        raise RuntimeError(f"torchish: no JAX device for '{dev}'")
    index = dev.index or 0
    if index >= len(devs):
        raise RuntimeError("CUDA error: invalid device ordinal" if dev.type == "cuda"
                           else f"torchish: device index {index} out of range for '{dev.type}'")
    return devs[index]


def from_jax_device(jdev):
    platform = jdev.platform
    if platform == "cpu" and not (_SIMULATED_CUDA and jdev.id > 0):
        return CPU
    kind = "cuda" if platform in ("gpu", "cuda", "rocm", "cpu") else "xla"
    return device(kind, _platform_devices(_JAX_PLATFORM[kind]).index(jdev))


CPU = device("cpu")
_default = [CPU]
_entered = []  # the defaults that `with device(...)` blocks replaced, innermost last


def get_default_device():
    return _default[0]


def set_default_device(dev):
    _default[0] = CPU if dev is None else device(dev)


def with_index(dev):
    """A tensor's device always names its index (`cuda` -> `cuda:0`, the current device)."""
    if dev.type == "meta":   # (PyTorch drops a meta index: `meta:0` tensors are on `meta`)
        return device("meta") if dev.index is not None else dev
    return dev if dev.index is not None or dev.type == "cpu" else device(dev.type, 0)


@functools.lru_cache(maxsize=None)
def has_accelerator():
    """Whether any non-CPU device exists (tensors may then live on two devices)."""
    return bool(_platform_devices("gpu") or _platform_devices("tpu"))


def cuda_device_count():
    return len(_platform_devices("gpu"))
