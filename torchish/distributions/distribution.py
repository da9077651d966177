"""`Distribution`: the base class (shapes, argument and sample validation, expand plumbing)."""
import warnings

from .. import _tensor
from . import constraints
from .utils import is_traced, lazy_property

__all__ = ["Distribution"]


def _torch():
    import torchish
    return torchish


def _all_true(valid):
    # a traced check cannot be read eagerly: validation is eager-only (PyTorch skips it when
    # tracing too)
    if is_traced(valid):
        return True
    return bool(valid.all())


class Distribution:
    """Base class of probability distributions: `batch_shape` indexes independent (possibly
    differently parametrised) distributions, `event_shape` is the shape of one draw."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        Size = _torch().Size
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # the parameter was not given (probs vs logits)
                value = getattr(self, param)
                if not _all_true(constraint.check(value)):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=()):
        with _torch().no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(_torch().Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return _torch().exp(self.entropy())

    def _extended_shape(self, sample_shape=()):
        Size = _torch().Size
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        return Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """The checks `log_prob`/`cdf` run under validate_args: shapes, then support."""
        if not isinstance(value, _tensor.Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = len(value.size()) - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual = value.size()
        expected = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        if not _all_true(support.check(value)):
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape "
                f"{tuple(value.shape)}) to be within the support ({support!r}) of the "
                f"distribution {self!r}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _expanded(self, cls, batch_shape, _instance, params, event_shape=None):
        """The common `expand`: a new instance of `cls` whose named tensor parameters (only
        those present on self) are expanded to `batch_shape` (+ each one's trailing dims)."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = _torch().Size(batch_shape)
        for name, trailing in params.items():
            if name in self.__dict__:
                v = self.__dict__[name]
                setattr(new, name, v.expand(batch_shape + v.shape[v.dim() - trailing:]
                                            if trailing else batch_shape))
        Distribution.__init__(new, batch_shape, self.event_shape if event_shape is None
                              else event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self):
        def show(v):  # one-element parameters print their value, others their size
            return v if v.numel() == 1 else v.size()
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {show(self.__dict__[p])}" for p in names)
        return self.__class__.__name__ + "(" + args + ")"
