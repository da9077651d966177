"""The op families. Importing them fills the registry and binds the Tensor methods."""
from . import pointwise, reduction, shape, shape_split, shape_copies, indexing  # noqa: F401
from . import gather_scatter, linalg  # noqa: F401
from . import creation, creation_ranges, creation_data, conversion  # noqa: F401
from . import legacy_tensor_types  # noqa: F401
from . import random_ops  # noqa: F401
from . import nn_rnn  # noqa: F401
from . import nn_ops  # noqa: F401
from . import nn_conv, nn_norm, resample  # noqa: F401
from . import pointwise_math, activations, metadata, scatter, statistics, structure  # noqa: F401
from . import linalg_einsum, linalg_matrix, linalg_distance, linalg_decomp  # noqa: F401
from . import linalg_lapack, linalg_cholesky, linalg_lu  # noqa: F401
from . import linalg_householder, linalg_ldl, linalg_lobpcg, linalg_removed  # noqa: F401
from . import set_ops, copy_variants  # noqa: F401
from . import special_polynomials, special_bessel, random_binomial  # noqa: F401
from .registry import REGISTRY, public_functions, functional_ops  # noqa: F401
from . import complex_refusals

complex_refusals.install(REGISTRY)   # (once every family has declared its ops)


def plain_functions():
    """Functions written in Python over ops (overload resolution, composites)."""
    out = {}
    for mod in (shape, shape_split, shape_copies, indexing, gather_scatter, linalg,
                linalg_einsum, linalg_matrix, linalg_distance, creation, creation_ranges,
                creation_data, legacy_tensor_types,
                random_ops, pointwise_math, metadata, scatter, statistics, structure,
                linalg_decomp, linalg_lu, linalg_householder, linalg_lobpcg, linalg_removed,
                random_binomial, set_ops):
        for name in mod.PLAIN:
            out[name] = getattr(mod, name)
        out.update(getattr(mod, "FUNCTION_FORMS", {}))
    out.update(reduction.OVERLOADS)
    out["range"] = creation_ranges.range_
    from .._tensor import Tensor
    for name in pointwise_math.INPLACE_FUNCTIONS:  # torch.relu_(t) is t.relu_()
        out[name] = getattr(Tensor, name)
    from .arg_parser import PARSED_FUNCTIONS
    from .declare import parsed
    from .out_arg import accept_out
    from ..overrides import entry   # (they dispatch __torch_function__ once, at their entry)
    return {name: entry(accept_out(name, parsed(fn, name) if name in PARSED_FUNCTIONS else fn),
                        "torch." + name) for name, fn in out.items()}
