"""`torch.sparse`: sparse COO tensors' functions (products, sums, softmax) and the legacy
`torch.sparse.FloatTensor(indices, values, size)` constructors. The implementation
(`torchish/_sparse_*.py`) loads on first use."""
from .. import _dtype as dt
from .._warnings import warn_once
from .._unsupported import module_getattr

__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "check_sparse_tensor_invariants",
           "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "HalfTensor",
           "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor", "BoolTensor"]


def _math():
    from .. import _sparse_ops, _sparse_math   # noqa: F401  (_sparse_ops completes the table)
    return _sparse_math


def mm(mat1, mat2, reduce=None):
    return _math().sparse_mm(mat1, mat2, reduce)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    return _math().sparse_addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):
    return _math().sparse_sum(input, dim, dtype)


def softmax(input, dim, *, dtype=None):
    return _math().softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    return _math().softmax(input, dim, dtype, log=True)


def sparse_coo_tensor(indices=None, values=None, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None):
    """`torch.sparse_coo_tensor`; `sparse_coo_tensor(size)` is an empty one of that size."""
    from .._sparse_ops import sparse_coo_tensor as make
    if indices is None and size is None:
        raise TypeError("sparse_coo_tensor() received an invalid combination of arguments - "
                        "got (), but expected one of:")
    if values is None and (indices is None) != (size is None):
        from .. import empty, zeros
        sizes = tuple(size if indices is None else indices)
        return make(zeros(len(sizes), 0, dtype=dt.int64), empty(0, dtype=dtype), sizes,
                    device=device, requires_grad=requires_grad,
                    check_invariants=check_invariants)
    return make(indices, values, size, dtype=dtype, device=device, requires_grad=requires_grad,
                check_invariants=check_invariants, is_coalesced=is_coalesced)


def spmm(input, mat2):
    """`torch.spmm`."""
    return _math().spmm(input, mat2)


class check_sparse_tensor_invariants:
    """`torch.sparse.check_sparse_tensor_invariants`: a context manager and decorator (and
    `enable()`/`disable()` globally) making `sparse_coo_tensor` check its indices by default."""
    _state = [None]   # None: never set (then construction warns once that checks are off)

    @staticmethod
    def is_enabled():
        return bool(check_sparse_tensor_invariants._state[0])

    @staticmethod
    def enable():
        check_sparse_tensor_invariants._state[0] = True

    @staticmethod
    def disable():
        check_sparse_tensor_invariants._state[0] = False

    def __init__(self, enable=True):
        self.state = enable
        self.saved = None

    def __enter__(self):
        self.saved = check_sparse_tensor_invariants._state[0]
        check_sparse_tensor_invariants._state[0] = self.state

    def __exit__(self, *exc):
        check_sparse_tensor_invariants._state[0] = self.saved

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped


class _LegacySparseType(type):
    def __instancecheck__(cls, obj):
        return getattr(obj, "is_sparse", False) and obj.dtype is cls._dtype


def _legacy(name, dtype):
    def __new__(cls, indices, values=None, size=None, *, device=None):
        if isinstance(indices, int):   # FloatTensor(2, 3): an empty one of that size
            from .. import empty, zeros
            sizes = (indices,) + ((values,) if values is not None else ()) + (
                (size,) if size is not None else ())
            return sparse_coo_tensor(zeros(len(sizes), 0, dtype=dt.int64),
                                     empty(0, dtype=dtype), sizes, device=device,
                                     check_invariants=False)
        warn_once("torch.sparse.SparseTensor(indices, values, shape, *, device=) is "
                  "deprecated.  Please use torch.sparse_coo_tensor(indices, values, shape, "
                  "dtype=, device=). (Triggered internally at /__w/pytorch/pytorch/torch/csrc/"
                  "utils/tensor_new.cpp:653.)")
        return sparse_coo_tensor(indices, values, size, device=device, check_invariants=False)
    cls = _LegacySparseType(name, (), {"__new__": __new__, "_dtype": dtype,
                                       "__module__": "torch.sparse"})
    return cls


FloatTensor = _legacy("FloatTensor", dt.float32)
DoubleTensor = _legacy("DoubleTensor", dt.float64)
HalfTensor = _legacy("HalfTensor", dt.float16)
BFloat16Tensor = _legacy("BFloat16Tensor", dt.bfloat16)
LongTensor = _legacy("LongTensor", dt.int64)
IntTensor = _legacy("IntTensor", dt.int32)
ShortTensor = _legacy("ShortTensor", dt.int16)
CharTensor = _legacy("CharTensor", dt.int8)
ByteTensor = _legacy("ByteTensor", dt.uint8)
BoolTensor = _legacy("BoolTensor", dt.bool)

__getattr__ = module_getattr(__name__)
