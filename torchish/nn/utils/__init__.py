"""`torchish.nn.utils`: gradient clipping, parameter/vector conversion, packed sequences,
parametrizations, the deprecated hook-based weight_norm and spectral_norm, skip_init,
conv/linear + batch norm fusion, pruning (`prune`, loaded on first use)."""
from . import rnn  # noqa: F401
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,  # noqa: F401
                        _clip_grads_with_norm_ as clip_grads_with_norm_,
                        _get_total_norm as get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .init import skip_init  # noqa: F401
from . import fusion  # noqa: F401
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,  # noqa: F401
                     fuse_linear_bn_weights)

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grads_with_norm_", "clip_grad_value_",
           "get_total_norm", "parameters_to_vector", "parametrizations", "parametrize", "rnn",
           "vector_to_parameters", "weight_norm", "remove_weight_norm", "spectral_norm",
           "remove_spectral_norm", "skip_init", "stateless", "fusion",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


from ..._unsupported import module_getattr  # noqa: E402

_unknown = module_getattr(__name__)


def __getattr__(name):
    # imported on first use: they build on nn.modules, which imports this package first
    if name in ("parametrize", "parametrizations", "stateless"):   # (`prune` needs an import)
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    return _unknown(name)

