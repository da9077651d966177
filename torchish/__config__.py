"""`torch.__config__`: what the build is (torchish and the JAX under it)."""


def show():
    import jax
    import jaxlib
    from . import __version__
    return (f"torchish {__version__} (the PyTorch API on JAX)\n"
            f"  - JAX {jax.__version__}, jaxlib {jaxlib.__version__}\n"
            f"  - devices: {', '.join(sorted({d.platform for d in jax.devices()}))}\n")


def parallel_info():
    import os
    return (f"torchish runs ops through XLA's thread pool\n"
            f"CPUs: {os.cpu_count()}\n")
