"""`torch.backends.mps`: Apple's Metal backend, which torchish does not target."""


def is_available():
    return False


def is_built():
    return False
