"""`torch.backends.mha`: whether MultiheadAttention / TransformerEncoder(Layer) take
PyTorch's inference fast paths (torchish reproduces where their results differ)."""
_fastpath_enabled = [True]


def get_fastpath_enabled():
    return _fastpath_enabled[0]


def set_fastpath_enabled(value):
    _fastpath_enabled[0] = bool(value)
