"""`torch.backends.opt_einsum`: XLA orders einsum contractions itself."""
enabled = True
strategy = "auto"


def is_available():
    return False


def get_opt_einsum():
    return None
