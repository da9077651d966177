"""The `--device` switch shared by the benchmarks: one device for all three contenders."""


def add_device_arg(parser):
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                        help="run torchish, raw JAX and PyTorch on this device (default: cpu)")


def select(name, torchish, torch=None):
    """Make `name` torchish's default device; return (raw JAX's device, PyTorch's device or
    None when PyTorch is missing or lacks that device)."""
    torchish.set_default_device(name)
    jax_device = next(iter(torchish.empty(0).jax().devices()))
    torch_device = None
    if torch is not None and (name == "cpu" or torch.cuda.is_available()):
        torch_device = torch.device(name)
    return jax_device, torch_device


def torch_sync(torch, device):
    """A waiter for PyTorch work queued on `device` (CUDA runs asynchronously)."""
    if device is not None and device.type == "cuda":
        return torch.cuda.synchronize
    return lambda: None
