"""`torch.functional`: the module where PyTorch defines some top-level functions in Python
(`einsum`, `split`, `norm`, `meshgrid`, `stft`, ...); code imports them from here too. The
functions are the very objects `torch.X` names, as in PyTorch."""
from . import (atleast_1d, atleast_2d, atleast_3d, broadcast_shapes, broadcast_tensors,
               cartesian_prod, block_diag, cdist, chain_matmul, einsum, istft, lu, norm,
               meshgrid, pca_lowrank, split, stft, svd_lowrank, tensordot, unique,
               unique_consecutive, unravel_index)

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu",
           "norm", "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
           "unique", "unique_consecutive", "unravel_index"]
