"""`torch.backends.cpu`."""


def get_cpu_capability():
    return "DEFAULT"
