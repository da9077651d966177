"""Small PyTorch-parity edges, each checked against real PyTorch (result or error, printed):
NumPy scalars in `torch.tensor` / `as_tensor` (uint64 elements only from Python ints, the
element-by-element dtype promotion and its error), Python ints beyond int64 where a Number is
expected (`alpha=`, `full`, `scalar_tensor`, `arange`, `fill_`, `pow`, binary operands and
their dunders), `x[key] = number`, complex values refused (masked_fill, clamp, fmax), and
`torch.lobpcg` step by step ("basic" and "ortho")."""
import numpy as np
import pytest

import torchish
from differential import same_printed

torch = pytest.importorskip("torch")

U = np.uint64


# ---- NumPy scalars as tensor data -----------------------------------------------------------

CREATION = {
    "uint64_alone": lambda T: T.tensor(U(5)),
    "uint64_list": lambda T: T.tensor([U(5)]),
    "uint64_nested": lambda T: T.tensor([[U(5)]]),
    "uint64_tuple": lambda T: T.tensor((U(5),)),
    "uint64_big": lambda T: T.tensor([U(2 ** 63)]),
    "as_tensor_uint64": lambda T: T.as_tensor(U(5)),
    "as_tensor_uint64_list": lambda T: T.as_tensor([U(5)]),
    "as_tensor_uint64_to_int64": lambda T: T.as_tensor(U(5), dtype=T.int64),
    "as_tensor_uint64_list_to_float": lambda T: T.as_tensor([U(5)], dtype=T.float32),
    "uint64_to_float64": lambda T: T.tensor([U(5)], dtype=T.float64),
    "uint64_to_int32": lambda T: T.tensor([U(5)], dtype=T.int32),
    "uint64_big_to_float": lambda T: T.tensor([U(2 ** 63)], dtype=T.float32),
    "uint64_big_to_int64": lambda T: T.tensor([U(2 ** 63)], dtype=T.int64),
    "uint64_with_float": lambda T: T.tensor([U(5), 1.5]),
    "uint64_with_tensor": lambda T: T.tensor([U(5), T.tensor(1.5)]),
    "int64_scalar_to_uint64": lambda T: T.tensor(np.int64(5), dtype=T.uint64),
    "float32_scalar_to_uint64": lambda T: T.tensor(np.float32(5), dtype=T.uint64),
    "uint32_list_to_uint64": lambda T: T.tensor([np.uint32(5)], dtype=T.uint64),
    "float_list_to_uint64": lambda T: T.tensor([5.0], dtype=T.uint64),
    "bool_list_to_uint64": lambda T: T.tensor([True], dtype=T.uint64),
    "uint64_tensor_element": lambda T: T.tensor([T.tensor(5, dtype=T.uint64)]),
    "uint32_tensor_element": lambda T: T.tensor([T.tensor(5, dtype=T.uint32)]),
    "uint64_array_element": lambda T: T.tensor([np.array([5], dtype=U)]),
    "uint32_alone": lambda T: T.tensor(np.uint32(2 ** 32 - 1)),
    "uint16_list": lambda T: T.tensor([np.uint16(5)]),
    "uint32_overflow_int32": lambda T: T.tensor([np.uint32(2 ** 32 - 1)], dtype=T.int32),
    # PyTorch promotes element by element: its error names the types in the data's order
    "promote_order_long_uint64": lambda T: T.tensor([1, U(5)]),
    "promote_order_uint64_long": lambda T: T.tensor([U(5), 1]),
    "promote_order_uint32_char": lambda T: T.tensor([np.uint32(5), np.int8(1)]),
    "promote_order_uint16_uint32": lambda T: T.tensor([np.uint16(5), np.uint32(1)]),
    "promote_order_uint16_bool": lambda T: T.tensor([np.uint16(5), True]),
    "promote_int8_float": lambda T: T.tensor([np.int8(1), 2.5]),
    "promote_int8_int": lambda T: T.tensor([np.int8(1), 2]),
    "zero_dim_array_element": lambda T: T.tensor([np.array(5)]),
    "zero_dim_array_element_uint64": lambda T: T.tensor([np.array(U(5))]),
    "zero_dim_array_element_to_uint64": lambda T: T.tensor([np.array(5)], dtype=T.uint64),
    "numpy_str_scalar": lambda T: T.tensor(np.str_("a")),
    "numpy_bytes_scalar": lambda T: T.tensor(np.bytes_(b"a")),
    "from_numpy_uint64": lambda T: T.from_numpy(np.array(U(2 ** 63))),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_tensor_from_numpy_scalars(name):
    same_printed(CREATION[name], torch)


# ---- Python ints beyond int64 (and NumPy uint64 beyond it) as Numbers -----------------------

def _f(T):
    return T.ones(2)


def _i(T):
    return T.ones(2, dtype=T.int64)


def _u8(T):
    return T.ones(2, dtype=T.uint8)


def _h(T):
    return T.ones(2, dtype=T.float16)


NUMBERS = {
    # alpha: parsed as a Scalar, then converted to the computation type (checked)
    "add_alpha_uint64_max_float": lambda T: T.add(_f(T), _f(T), alpha=2 ** 64 - 1),
    "add_alpha_2p63_float": lambda T: T.add(_f(T), _f(T), alpha=2 ** 63),
    "add_alpha_2p64": lambda T: T.add(_f(T), _f(T), alpha=2 ** 64),
    "add_alpha_below_int64": lambda T: T.add(_f(T), _f(T), alpha=-2 ** 63 - 1),
    "add_alpha_2p63_int": lambda T: T.add(_i(T), _i(T), alpha=2 ** 63),
    "add_alpha_int64_max_uint8": lambda T: T.add(_u8(T), _u8(T), alpha=2 ** 63 - 1),
    "add_alpha_300_uint8": lambda T: T.add(_u8(T), _u8(T), alpha=300),
    "add_alpha_minus255_uint8": lambda T: T.add(_u8(T), _u8(T), alpha=-255),
    "add_alpha_minus256_uint8": lambda T: T.add(_u8(T), _u8(T), alpha=-256),
    "add_alpha_1e300_float": lambda T: T.add(_f(T), _f(T), alpha=1e300),
    "add_alpha_1e6_half": lambda T: T.add(_h(T), _h(T), alpha=1e6),
    "add_alpha_complex_float": lambda T: T.add(_f(T), _f(T), alpha=1j),
    "add_alpha_complex_int": lambda T: T.add(_i(T), _i(T), alpha=1j),
    "add_alpha_complex_complex": lambda T: T.add(_f(T).to(T.complex64), _f(T), alpha=1j),
    "add__alpha_complex_float": lambda T: _f(T).add_(_f(T), alpha=1j),
    "add_alpha_numpy_uint64_big": lambda T: T.add(_f(T), _f(T), alpha=U(2 ** 63)),
    "add_alpha_numpy_uint64": lambda T: T.add(_f(T), _f(T), alpha=U(5)),
    "add_alpha_mixed_2p63": lambda T: T.add(_i(T), 2.5, alpha=2 ** 63),
    # sub adds -alpha: c10 negates an unsigned Scalar as an int64
    "sub_alpha_uint64_max": lambda T: T.sub(_f(T), _f(T), alpha=2 ** 64 - 1),
    "sub_alpha_2p63": lambda T: _f(T).sub(_f(T), alpha=2 ** 63),
    "sub__alpha_uint64_max": lambda T: _f(T).sub_(_f(T), alpha=2 ** 64 - 1),
    "rsub_alpha_uint64_max": lambda T: T.rsub(_f(T), 3 * _f(T), alpha=2 ** 64 - 1),
    "sub_alpha_uint64_max_complex": lambda T: _f(T).to(T.complex64).sub(_f(T), alpha=2 ** 64 - 1),
    "addcmul_value_2p64": lambda T: T.addcmul(_f(T), _f(T), _f(T), value=2 ** 64),
    "addcmul_value_2p63": lambda T: T.addcmul(_f(T), _f(T), _f(T), value=2 ** 63),
    "addcmul_value_2p63_int": lambda T: T.addcmul(_i(T), _i(T), _i(T), value=2 ** 63),
    "addmm_alpha_2p64": lambda T: T.addmm(T.ones(2, 2), T.ones(2, 2), T.ones(2, 2), alpha=2 ** 64),
    "addmm_alpha_2p63": lambda T: T.addmm(T.ones(2, 2), T.ones(2, 2), T.ones(2, 2), alpha=2 ** 63),
    "addcdiv_value_uint64_max": lambda T: T.addcdiv(_f(T), _f(T), _f(T), value=2 ** 64 - 1),
    "addcdiv_value_below_int64": lambda T: T.addcdiv(_f(T), _f(T), _f(T), value=-2 ** 63 - 1),
    "addr_beta_2p63_int": lambda T: T.addr(T.ones(2, 2, dtype=T.int64), _i(T), _i(T),
                                           beta=2 ** 63),
    "addr_beta_2p63_float": lambda T: T.addr(T.ones(2, 2), _f(T), _f(T), beta=2 ** 63),
    "addmv_alpha_numpy_uint64_big": lambda T: T.addmv(_f(T), T.ones(2, 2), _f(T),
                                                      alpha=U(2 ** 63)),
    "baddbmm_beta_1e300": lambda T: T.baddbmm(T.ones(1, 2, 2), T.ones(1, 2, 2), T.ones(1, 2, 2),
                                              beta=1e300),
    "index_add_alpha_2p63_int": lambda T: _i(T).index_add(0, T.tensor([0]), _i(T)[:1],
                                                          alpha=2 ** 63),
    "index_add_alpha_2p63_float": lambda T: _f(T).index_add(0, T.tensor([0]), _f(T)[:1],
                                                            alpha=2 ** 63),
    "index_add_alpha_2p64": lambda T: _f(T).index_add(0, T.tensor([0]), _f(T)[:1], alpha=2 ** 64),
    # full / fill_ / scalar_tensor / arange
    "full_2p64": lambda T: T.full((2,), 2 ** 64),
    "full_below_int64": lambda T: T.full((2,), -2 ** 63 - 1),
    "full_2p63": lambda T: T.full((2,), 2 ** 63),
    "full_2p63_uint64": lambda T: T.full((2,), 2 ** 63, dtype=T.uint64),
    "full_2p64_uint64": lambda T: T.full((2,), 2 ** 64, dtype=T.uint64),
    "full_minus1_uint64": lambda T: T.full((2,), -1, dtype=T.uint64),
    "full_2p64_float": lambda T: T.full((2,), 2 ** 64, dtype=T.float32),
    "full_2p64_bool": lambda T: T.full((2,), 2 ** 64, dtype=T.bool),
    "full_numpy_uint64_big": lambda T: T.full((2,), U(2 ** 63)),
    "full_numpy_uint64": lambda T: T.full((2,), U(5)),
    "full_like_2p64": lambda T: T.full_like(_f(T), 2 ** 64),
    "new_full_below_int64": lambda T: _f(T).new_full((2,), -2 ** 63 - 1),
    "fill_2p64": lambda T: _f(T).fill_(2 ** 64),
    "fill_2p63_int": lambda T: _i(T).fill_(2 ** 63),
    "fill_numpy_uint64_big": lambda T: _f(T).fill_(U(2 ** 63)),
    "scalar_tensor_2p64": lambda T: T.scalar_tensor(2 ** 64),
    "scalar_tensor_2p63": lambda T: T.scalar_tensor(2 ** 63),
    "scalar_tensor_2p63_int64": lambda T: T.scalar_tensor(2 ** 63, dtype=T.int64),
    "scalar_tensor_300_uint8": lambda T: T.scalar_tensor(300, dtype=T.uint8),
    "scalar_tensor_minus1_uint64": lambda T: T.scalar_tensor(-1, dtype=T.uint64),
    "scalar_tensor_1e300": lambda T: T.scalar_tensor(1e300),
    "scalar_tensor_1e300_half": lambda T: T.scalar_tensor(1e300, dtype=T.float16),
    "scalar_tensor_70000_half": lambda T: T.scalar_tensor(70000, dtype=T.float16),
    "scalar_tensor_numpy_uint64": lambda T: T.scalar_tensor(U(5)),
    "arange_2p64": lambda T: T.arange(2 ** 64),
    "arange_2p63": lambda T: T.arange(2 ** 63),
    "arange_int64_max_end": lambda T: T.arange(2 ** 63 - 1, 2 ** 63),
    "arange_empty_int32_end_beyond": lambda T: T.arange(2 ** 63 - 1, 2 ** 63, dtype=T.int32),
    "arange_start_beyond_int32": lambda T: T.arange(2 ** 63, 2 ** 63 + 1, dtype=T.int32),
    "arange_1e300_uint8": lambda T: T.arange(1e300, dtype=T.uint8),
    "arange_1e300_half": lambda T: T.arange(1e300, 1e300 + 1, dtype=T.float16),
    "arange_below_int64": lambda T: T.arange(-2 ** 63 - 1),
    "arange_bool": lambda T: T.arange(3, dtype=T.bool),
    "arange_complex": lambda T: T.arange(3, dtype=T.complex64),
    "arange_2p64_uint64": lambda T: T.arange(2 ** 64, dtype=T.uint64),
    "arange_numpy_uint64_big": lambda T: T.arange(U(2 ** 63)),
    "arange_numpy_uint64": lambda T: T.arange(U(3)),
    # pow's number exponent: read as a double by float32/64 kernels, converted (checked) to
    # the tensor's type by the others, an unsigned Scalar refused by integer ones
    "pow_float_1e300": lambda T: _f(T) ** 1e300,
    "pow_int_1e300": lambda T: _i(T) ** 1e300,
    "pow_float_2p63": lambda T: _f(T) ** 2 ** 63,
    "pow_float_2p64": lambda T: _f(T) ** 2 ** 64,
    "pow__float_1e300": lambda T: _f(T).pow_(1e300),
    "pow_half_70000": lambda T: _h(T) ** 70000.0,
    "pow_half_2p63": lambda T: _h(T) ** 2 ** 63,
    "pow_bfloat16_1e300": lambda T: _f(T).to(T.bfloat16) ** 1e300,
    "pow_int8_300": lambda T: T.ones(2, dtype=T.int8) ** 300,
    "pow_uint8_2p63": lambda T: _u8(T) ** 2 ** 63,
    "pow_uint8_int64_max": lambda T: _u8(T) ** (2 ** 63 - 1),
    "pow_int_uint64_max": lambda T: _i(T) ** (2 ** 64 - 1),
    "pow_int_int64_max": lambda T: _i(T) ** (2 ** 63 - 1),
    "pow_int_negative": lambda T: _i(T) ** -1,
    # binary operands
    "mul_2p64": lambda T: _f(T) * 2 ** 64,
    "radd_2p64": lambda T: 2 ** 64 + _i(T),
    "add_2p63_int": lambda T: _i(T) + 2 ** 63,
    "add_method_numpy_uint64_big": lambda T: _f(T).add(U(2 ** 63)),
    "add_numpy_uint64": lambda T: _i(T) + U(5),
    "radd_numpy_uint64": lambda T: U(5) + _f(T),
}


def _iadd_big(T):
    y = T.ones(2)
    y += U(2 ** 63)   # (NotImplemented twice: NumPy's __radd__ makes an ndarray of it)
    return y


# a NumPy uint64 beyond int64 is a parser error: a binary dunder returns NotImplemented on it,
# so Python asks NumPy (an ndarray result, or Python's own TypeError)
NUMBERS.update({
    "dunder_add_numpy_uint64_big": lambda T: _f(T) + U(2 ** 63),
    "dunder_mul_numpy_uint64_big_int": lambda T: _i(T) * U(2 ** 63),
    "dunder_rsub_numpy_uint64_big": lambda T: U(2 ** 63) - _f(T),
    "dunder_radd_numpy_uint64_big": lambda T: U(2 ** 63) + _f(T),
    "dunder_pow_numpy_uint64_big": lambda T: _f(T) ** U(2 ** 63),
    "dunder_eq_numpy_uint64_big": lambda T: _f(T) == U(2 ** 63),
    "dunder_lt_numpy_uint64_big": lambda T: _f(T) < U(2 ** 63),
    "dunder_iadd_numpy_uint64_big": _iadd_big,
    "mul_numpy_uint64_big": lambda T: T.mul(_f(T), U(2 ** 63)),
    "add__numpy_uint64_big": lambda T: _f(T).add_(U(2 ** 63)),
    "where_numpy_uint64_big": lambda T: T.where(_f(T) > 0, _f(T), U(2 ** 63)),
    "clamp_numpy_uint64_big": lambda T: _f(T).clamp(max=U(2 ** 63)),
})


@pytest.mark.parametrize("name", sorted(NUMBERS))
def test_numbers_beyond_int64(name):
    same_printed(NUMBERS[name], torch)


def test_alpha_inside_compile():
    """A uint64-range alpha passes as the float it converts to, traced as well."""
    import jax
    x = torchish.ones(3)

    @jax.jit
    def f(a):
        return torchish.sub(torchish.from_jax(a), x, alpha=2 ** 64 - 1)._data

    expected = torch.sub(torch.ones(3), torch.ones(3), alpha=2 ** 64 - 1)
    assert np.asarray(f(x._data)).tolist() == expected.tolist()


# ---- x[key] = number ---------------------------------------------------------------------

_SET_DTYPES = ["float32", "float16", "int64", "int32", "uint8", "uint64", "bool", "complex64"]
_SET_VALUES = [2 ** 64, 2 ** 63, -2 ** 63 - 1, 2 ** 63 - 1, 300, -1, 1e300, float("nan"), 2.5,
               True, 1 + 2j, 1 + 0j, U(2 ** 63), np.float64(1e300), np.int64(300),
               np.float32(2.5), np.bool_(True)]


def _assign(T, dtype, key, value):
    x = T.zeros(3, dtype=getattr(T, dtype))
    x[key] = value
    return x


@pytest.mark.parametrize("dtype", _SET_DTYPES)
@pytest.mark.parametrize("value", _SET_VALUES, ids=repr)
def test_setitem_number(dtype, value):
    """PyTorch reads the number (an int as long long, NumPy scalars other than integers and
    np.float64 refused), then converts it to the tensor's dtype with c10's check."""
    for key in (0, slice(1, None), [0, 2]):
        same_printed(lambda T: _assign(T, dtype, key, value), torch)


def _mask(T):
    return T.tensor([True, False, True])


MASKED = {
    "setitem_mask_uint64": lambda T: _assign(T, "uint64", _mask(T), 1),
    "setitem_mask_uint32_tensor": lambda T: _assign(T, "uint32", _mask(T),
                                                    T.tensor(1, dtype=T.uint32)),
    "setitem_mask_int64_1e300": lambda T: _assign(T, "int64", _mask(T), 1e300),
    "setitem_mask_float_2p63": lambda T: _assign(T, "float32", _mask(T), 2 ** 63),
    "setitem_mask_float_numpy_float32": lambda T: _assign(T, "float32", _mask(T),
                                                          np.float32(1)),
    "masked_fill_complex_int64": lambda T: T.zeros(3, dtype=T.int64).masked_fill(_mask(T), 1j),
    "masked_fill_complex_int16": lambda T: T.zeros(3, dtype=T.int16).masked_fill(_mask(T), 1j),
    "masked_fill_complex_uint8": lambda T: T.zeros(3, dtype=T.uint8).masked_fill(_mask(T), 1j),
    "masked_fill_complex_bool": lambda T: T.zeros(3, dtype=T.bool).masked_fill(_mask(T), 2j),
    "masked_fill_complex_half": lambda T: T.zeros(3, dtype=T.float16).masked_fill(_mask(T), 1j),
    "masked_fill_complex_tensor_int64": lambda T: T.zeros(3, dtype=T.int64).masked_fill(
        _mask(T), T.tensor(1 + 2j)),
}


@pytest.mark.parametrize("name", sorted(MASKED))
def test_masked_assignment(name):
    same_printed(MASKED[name], torch)


@pytest.mark.parametrize("name", ["heaviside", "fmax", "fmin"])
def test_complex_refused(name):
    same_printed(lambda T: getattr(T, name)(T.tensor([1 + 2j]), T.tensor([1 + 2j])), torch)


CLAMPS = {
    "clamp_min_complex": lambda T: T.tensor([1 + 2j]).clamp_min(0),
    "clamp_max_complex": lambda T: T.tensor([1 + 2j]).clamp_max(0),
    "clamp_min__complex": lambda T: T.tensor([1 + 2j]).clamp_min_(0),
    "clamp_complex": lambda T: T.tensor([1 + 2j]).clamp(0, 1),
    "clamp_float_complex_max": lambda T: T.ones(1).clamp(max=1 + 2j),
    "clamp__float_complex_min": lambda T: T.ones(1).clamp_(min=1j),
    "clamp_min_float_complex": lambda T: T.ones(1).clamp_min(1j),
    "clamp_int_complex_min": lambda T: T.ones(1, dtype=T.int64).clamp(min=1j),
}


@pytest.mark.parametrize("name", sorted(CLAMPS))
def test_clamp_complex(name):
    same_printed(CLAMPS[name], torch)


# ---- lobpcg ---------------------------------------------------------------------------------

def _spd(m, seed, shift):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, m))
    return a @ a.T + shift * np.eye(m)


def _run(T, a, b, x0, **kw):
    """(eigenvalues, the per-step trace, the caller's X after the call)."""
    steps = []

    def tracker(w):
        steps.append((w.ivars["istep"], w.ivars["converged_count"],
                      w.ivars["converged_end"], [float(v) for v in w.tvars["rerr"]],
                      [float(v) for v in w.E]))
    X = T.tensor(x0.copy())
    E, V = T.lobpcg(T.tensor(a), B=None if b is None else T.tensor(b), X=X, tracker=tracker,
                    **kw)
    return np.asarray(E.tolist()), np.asarray(V.tolist()), steps, np.asarray(X.tolist())


@pytest.mark.parametrize("method", ["basic", None])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("with_b", [False, True])
def test_lobpcg_steps_match(method, largest, with_b):
    """Same X: every step's converged counts, basis size, residuals and Ritz values agree."""
    m, k = 12, 2
    a = _spd(m, 0, 1.0)
    b = _spd(m, 1, m) / m if with_b else None
    x0 = np.random.default_rng(2).standard_normal((m, k))
    kw = dict(k=k, largest=largest, method=method, niter=8)
    e, v, steps, x = _run(torchish, a, b, x0, **kw)
    et, vt, steps_t, xt = _run(torch, a, b, x0, **kw)
    assert len(steps) == len(steps_t)
    for s, st in zip(steps, steps_t):
        assert s[:3] == st[:3]
        np.testing.assert_allclose(s[3], st[3], rtol=1e-6, atol=1e-13)
        np.testing.assert_allclose(s[4], st[4], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(e, et, rtol=1e-10)
    np.testing.assert_allclose(np.abs(v), np.abs(vt), atol=1e-8)
    # "basic" writes its iterate into the caller's X, as PyTorch's; "ortho" leaves it alone
    np.testing.assert_allclose(np.abs(x), np.abs(xt), atol=1e-8)   # (eigh's signs)
    np.testing.assert_array_equal(x, v[:, :k] if method == "basic" else x0)


@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_basic_converges(largest):
    """Run to convergence: the eigenvalues PyTorch finds (and the exact ones) to tolerance."""
    m, k = 15, 2
    a = _spd(m, 3, 1.0)
    x0 = np.random.default_rng(4).standard_normal((m, k))
    e = _run(torchish, a, None, x0, k=k, largest=largest, method="basic")[0]
    et = _run(torch, a, None, x0, k=k, largest=largest, method="basic")[0]
    np.testing.assert_allclose(e, et, rtol=1e-9)
    w = np.linalg.eigvalsh(a)
    np.testing.assert_allclose(e, w[::-1][:k] if largest else w[:k], rtol=1e-7)


def test_lobpcg_basic_float32_preconditioned():
    m, k = 12, 1
    a = _spd(m, 5, 1.0).astype(np.float32)
    ik = np.diag(1 / np.diag(a)).astype(np.float32)   # a Jacobi preconditioner
    x0 = np.random.default_rng(6).standard_normal((m, k)).astype(np.float32)
    out = []
    for T in (torchish, torch):
        E, _ = T.lobpcg(T.tensor(a), X=T.tensor(x0.copy()), iK=T.tensor(ik), method="basic",
                        niter=30)
        out.append(np.asarray(E.tolist()))
    np.testing.assert_allclose(out[0], out[1], rtol=1e-5)
