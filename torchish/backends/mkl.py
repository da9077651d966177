"""`torch.backends.mkl`."""


def is_available():
    return True
