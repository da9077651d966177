"""Transforms acting on whole vectors or matrices (reshape, softmax, stick-breaking, Cholesky
factors) or on slices (cat, stack), and the transform by a distribution's cdf. Re-exported by
`transforms`, where PyTorch defines them all."""
import math

from . import constraints
from .transforms import Transform
from .utils import _sum_rightmost, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["ReshapeTransform", "CorrCholeskyTransform", "SoftmaxTransform",
           "StickBreakingTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "CatTransform", "StackTransform", "CumulativeDistributionTransform"]


def _torch():
    import torchish
    return torchish


def _pad_last(x, left, right, value):
    return _torch().nn.functional.pad(x, [left, right], value=value)


class ReshapeTransform(Transform):
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        Size = _torch().Size
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        return x.reshape(x.shape[:x.dim() - len(self.in_shape)] + self.out_shape)

    def _inverse(self, y):
        return y.reshape(y.shape[:y.dim() - len(self.out_shape)] + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    @staticmethod
    def _reshaped(shape, src, dst):
        if len(shape) < len(src):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(src)
        if shape[cut:] != src:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {src}")
        return shape[:cut] + dst

    def forward_shape(self, shape):
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._reshaped(shape, self.out_shape, self.in_shape)


class CorrCholeskyTransform(Transform):
    """Unconstrained vector of length D(D-1)/2 -> Cholesky factor of a D x D correlation
    matrix: tanh to (-1, 1), then stick-breaking of each row's unit norm."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        torch = _torch()
        x = torch.tanh(x)
        eps = torch.finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + torch.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * _pad_last(z1m_cumprod_sqrt[..., :-1], 1, 0, 1)

    def _inverse(self, y):
        torch = _torch()
        y_cumsum = 1 - torch.cumsum(y * y, dim=-1)
        y_cumsum_shifted = _pad_last(y_cumsum[..., :-1], 1, 0, 1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(y_cumsum_shifted, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        F = _torch().nn.functional
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        stick_breaking = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh = -2 * (x + F.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking + tanh

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        N = shape[-1]
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (D, D)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        return shape[:-2] + (D * (D - 1) // 2,)


def _at_least_1d(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return shape


class SoftmaxTransform(Transform):
    """Softmax over the last dim (not bijective: the inverse is the log)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        return _at_least_1d(shape)

    def inverse_shape(self, shape):
        return _at_least_1d(shape)


class StickBreakingTransform(Transform):
    """R^(K-1) -> the K-simplex by stick breaking (bijective, unlike softmax)."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    @staticmethod
    def _offset(n, ref, top):
        return top - ref.new_ones(n).cumsum(-1)

    def _call(self, x):
        torch = _torch()
        offset = self._offset(x.shape[-1], x, x.shape[-1] + 1)
        finfo = torch.finfo(x.dtype)
        z = torch.clamp(torch.sigmoid(x - offset.log()), min=finfo.tiny, max=1.0 - finfo.eps)
        z_cumprod = (1 - z).cumprod(-1)
        return _pad_last(z, 0, 1, 1) * _pad_last(z_cumprod, 1, 0, 1)

    def _inverse(self, y):
        torch = _torch()
        y_crop = y[..., :-1]
        offset = self._offset(y_crop.shape[-1], y, y.shape[-1])
        sf = torch.clamp(1 - y_crop.cumsum(-1), min=torch.finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        F = _torch().nn.functional
        x = x - self._offset(x.shape[-1], x, x.shape[-1] + 1).log()
        return (-x + F.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        shape = _at_least_1d(shape)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        shape = _at_least_1d(shape)
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrix -> lower-triangular with a positive (exponentiated) diagonal."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(_torch().linalg.cholesky(y))


class CatTransform(Transform):
    """Applies transform i to the i-th block (of `lengths[i]`) along `dim`."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check(self, name, t):
        if not -t.dim() <= self.dim < t.dim():
            raise AssertionError(f"dim {self.dim} out of range for tensor with {t.dim()} "
                                 "dimensions")
        if t.size(self.dim) != self.length:
            raise AssertionError(f"{name}.size({self.dim}) = {t.size(self.dim)} must equal "
                                 f"length {self.length}")

    def _blocks(self, t):
        start = 0
        for length in self.lengths:
            yield t.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        self._check("x", x)
        return _torch().cat([t(b) for t, b in zip(self.transforms, self._blocks(x))],
                            dim=self.dim)

    def _inverse(self, y):
        self._check("y", y)
        return _torch().cat([t.inv(b) for t, b in zip(self.transforms, self._blocks(y))],
                            dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check("x", x)
        self._check("y", y)
        parts = []
        for t, xb, yb in zip(self.transforms, self._blocks(x), self._blocks(y)):
            ladj = t.log_abs_det_jacobian(xb, yb)
            if t.event_dim < self.event_dim:
                ladj = _sum_rightmost(ladj, self.event_dim - t.event_dim)
            parts.append(ladj)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        # a block dim inside the event is summed over, outside it the blocks are joined
        return _torch().cat(parts, dim=dim) if dim < 0 else sum(parts)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Applies transform i to the i-th slice along `dim`."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slices(self, name, z):
        if not -z.dim() <= self.dim < z.dim():
            raise AssertionError(f"dim {self.dim} out of range for tensor with {z.dim()} "
                                 "dimensions")
        if z.size(self.dim) != len(self.transforms):
            raise AssertionError(f"{name}.size({self.dim}) = {z.size(self.dim)} must equal "
                                 f"len(transforms) {len(self.transforms)}")
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        return _torch().stack([t(s) for s, t in zip(self._slices("x", x), self.transforms)],
                              dim=self.dim)

    def _inverse(self, y):
        return _torch().stack([t.inv(s) for s, t in zip(self._slices("y", y),
                                                        self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        xs, ys = self._slices("x", x), self._slices("y", y)
        return _torch().stack([t.log_abs_det_jacobian(a, b)
                               for a, b, t in zip(xs, ys, self.transforms)], dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """x -> distribution.cdf(x), onto the unit interval."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
