"""More ATen-level `torch.*` names against PyTorch: the native norm and dropout kernels
(their tuples of output and saved statistics), `frobenius_norm` / `nuclear_norm`, the
`as_strided` scatter/copy variants, `slice_inverse`, `conv_tbc`, the ATen forms of
`embedding_bag`, `grid_sampler` and `affine_grid_generator`, reflected shifts and small
runtime switches: values, dtypes, grad_fn names, gradients and errors."""
import warnings

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X3 = RNG.standard_normal((2, 6, 5))
W6, B6 = RNG.standard_normal(6), RNG.standard_normal(6)
W5, B5 = RNG.standard_normal(5), RNG.standard_normal(5)
M34 = RNG.standard_normal((3, 4))
TBC_IN, TBC_W, TBC_B = (RNG.standard_normal(s) for s in ((5, 2, 3), (3, 3, 4), (4,)))
EMB = RNG.standard_normal((10, 3))
IMG = RNG.standard_normal((1, 2, 4, 5))
GRID = RNG.uniform(-1.1, 1.1, (1, 3, 2, 2))
VOL = RNG.standard_normal((1, 1, 3, 4, 4))
GRID3 = RNG.uniform(-1, 1, (1, 2, 2, 2, 3))
THETA = RNG.standard_normal((2, 2, 3))


def _t(m, a, grad=True, dtype=None):
    t = m.tensor(a, dtype=dtype or m.float32)
    return t.requires_grad_() if grad else t


CASES = {
    "native_layer_norm": lambda m: m.native_layer_norm(_t(m, X3), [5], _t(m, W5), _t(m, B5),
                                                       1e-5),
    "native_layer_norm_2d_no_affine": lambda m: m.native_layer_norm(_t(m, X3), [6, 5], None,
                                                                    None, 1e-3),
    "native_batch_norm_train": lambda m: m.native_batch_norm(_t(m, X3), _t(m, W6), _t(m, B6),
                                                             m.zeros(6), m.ones(6), True, 0.1,
                                                             1e-5),
    "native_batch_norm_eval": lambda m: m.native_batch_norm(_t(m, X3), None, None,
                                                            m.zeros(6) + 0.5, m.ones(6) * 2,
                                                            False, 0.1, 1e-5),
    "native_batch_norm_no_stats": lambda m: m.native_batch_norm(
        _t(m, X3, dtype=m.float64), None, None, None, None, True, 0.1, 1e-5),
    "native_group_norm": lambda m: m.native_group_norm(_t(m, X3), _t(m, W6), _t(m, B6), 2, 6,
                                                       5, 3, 1e-5),
    "native_group_norm_no_affine": lambda m: m.native_group_norm(_t(m, X3), None, None, 2, 6,
                                                                 5, 2, 1e-5),
    "native_dropout_eval": lambda m: m.native_dropout(_t(m, X3), 0.5, False),
    "native_dropout_p1": lambda m: m.native_dropout(_t(m, X3), 1.0, True),
    "frobenius_norm": lambda m: m.frobenius_norm(_t(m, X3), [1, 2]),
    "frobenius_norm_keepdim": lambda m: m.frobenius_norm(_t(m, X3), [1], True),
    "nuclear_norm": lambda m: m.nuclear_norm(_t(m, M34)),
    "nuclear_norm_keepdim": lambda m: m.nuclear_norm(_t(m, M34), True),
    "nuclear_norm_dim": lambda m: m.nuclear_norm(_t(m, X3), [0, 2], True),
    # (values only: PyTorch refuses a non-contiguous input that requires grad, and reads a
    # src's gradient from the output gradient's own layout)
    "as_strided_scatter_transposed": lambda m: m.as_strided_scatter(
        _t(m, np.arange(12.), grad=False).view(3, 4).t(), _t(m, M34[:2, :2], grad=False),
        (2, 2), (4, 1),
        1),
    "as_strided_copy": lambda m: m.as_strided_copy(_t(m, np.arange(12.)), (2, 2), (3, 1), 1),
    "as_strided_copy_of_view": lambda m: m.as_strided_copy(_t(m, np.arange(12.))[2:], (2, 2),
                                                           (1, 1)),
    "detach_copy": lambda m: m.detach_copy(_t(m, M34, grad=False)),
    "view_as_real_copy": lambda m: m.view_as_real_copy(
        m.tensor(M34[:, :2], dtype=m.float32).contiguous().view(m.complex64).requires_grad_()),
    "view_as_complex_copy": lambda m: m.view_as_complex_copy(_t(m, M34[:, :2], grad=False)),
    "slice_inverse": lambda m: m.slice_inverse(_t(m, X3[0]).clone()[1:3], m.zeros(6, 5), 0, 1,
                                               3),
    "slice_inverse_method": lambda m: (_t(m, X3[0], grad=False) * 2)[1:3].slice_inverse(
        m.zeros(6, 5).t(), 0, 7, 9, 1),
    "max_pool1d_with_indices": lambda m: m.max_pool1d_with_indices(_t(m, X3), 2),
    "max_pool1d_with_indices_args": lambda m: m.max_pool1d_with_indices(_t(m, X3), 3, 1, 1, 1,
                                                                        True),
    "conv_tbc": lambda m: m.conv_tbc(_t(m, TBC_IN), _t(m, TBC_W), _t(m, TBC_B)),
    "conv_tbc_pad": lambda m: m.conv_tbc(_t(m, TBC_IN), _t(m, TBC_W), _t(m, TBC_B), 1),
    "F_conv_tbc": lambda m: m.nn.functional.conv_tbc(_t(m, TBC_IN), _t(m, TBC_W),
                                                     _t(m, TBC_B), pad=2),
    "grid_sampler": lambda m: m.grid_sampler(_t(m, IMG), _t(m, GRID), 0, 0, False),
    "grid_sampler_2d_nearest_border": lambda m: m.grid_sampler_2d(_t(m, IMG), _t(m, GRID), 1,
                                                                  1, True),
    "grid_sampler_2d_bicubic_reflect": lambda m: m.grid_sampler_2d(_t(m, IMG), _t(m, GRID), 2,
                                                                   2, False),
    "grid_sampler_3d": lambda m: m.grid_sampler_3d(_t(m, VOL), _t(m, GRID3), 0, 0, True),
    "affine_grid_generator": lambda m: m.affine_grid_generator(_t(m, THETA), [2, 1, 4, 5],
                                                               False),
    "affine_grid_generator_align": lambda m: m.affine_grid_generator(_t(m, THETA), [2, 3, 2, 3],
                                                                     True),
}

EMB_IDX = [1, 2, 4, 5, 4, 3, 2, 9]
BAGS = {
    "sum": dict(offsets=[0, 4], args=(False, 0)),
    "mean": dict(offsets=[0, 4], args=(False, 1)),
    "max": dict(offsets=[0, 4], args=(False, 2)),
    "empty_bags_mean": dict(offsets=[0, 0, 3, 8], args=(False, 1)),
    "empty_bags_max": dict(offsets=[0, 0, 3, 8], args=(False, 2)),
    "sum_padding": dict(offsets=[0, 4], args=(False, 0, False, None, False, 2)),
    "mean_padding": dict(offsets=[0, 4], args=(False, 1, False, None, False, 2)),
    "max_padding": dict(offsets=[0, 4], args=(False, 2, False, None, False, 2)),
    "sum_weights": dict(offsets=[0, 3], args=(False, 0, False, "w")),
    "mean_last_offset": dict(offsets=[0, 3, 8], args=(False, 1, False, None, True)),
}


def _outputs(r):
    return r if isinstance(r, tuple) else (r,)


def _compare(ours, theirs, rtol=1e-5, atol=1e-5):
    ours, theirs = _outputs(ours), _outputs(theirs)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert str(o.dtype) == str(t.dtype)
        assert tuple(o.shape) == tuple(t.shape)
        assert type(o.grad_fn).__name__ == type(t.grad_fn).__name__
        if t.dtype.is_complex:
            t = torch.view_as_real(t)
            o = torchish.view_as_real(o)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def _leaves_grads(m, fn):
    """Run `fn`, backprop the sum of its differentiable outputs (weighted, so every output
    counts), return the results and the gradients of the graph's leaves."""
    leaves = []
    orig = m.tensor

    def tensor(*a, **k):
        t = orig(*a, **k)
        leaves.append(t)
        return t
    m.tensor = tensor
    try:
        r = fn(m)
    finally:
        m.tensor = orig
    total = None
    for i, o in enumerate(_outputs(r)):
        if o.requires_grad and not o.dtype.is_complex:
            term = (o * (i + 1.5)).sin().sum()
            total = term if total is None else total + term
    grads = None
    if total is not None:
        total.backward()
        grads = [t.grad for t in leaves if t.requires_grad]
    return r, grads


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, our_grads = _leaves_grads(torchish, CASES[name])
        theirs, their_grads = _leaves_grads(torch, CASES[name])
    _compare(ours, theirs)
    assert (our_grads is None) == (their_grads is None)
    if their_grads:
        for o, t in zip(our_grads, their_grads):
            assert (o is None) == (t is None)
            if t is not None:
                np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=1e-4, atol=1e-5)


SCATTERS = {"offset": ((12,), None, (2, 2), (3, 1), 1),
            "default_offset": ((12,), None, (2, 2), (3, 1), None),
            "2d": ((3, 4), None, (2, 2), (4, 2), 3)}


def _scatter_inputs(m, shape, layout):
    x = m.tensor(np.arange(12.).reshape(shape), dtype=m.float32).requires_grad_()
    src = m.tensor(M34[:2, :2], dtype=m.float32).requires_grad_()
    return x, (x.t() if layout else x * 1), src


@pytest.mark.parametrize("key", sorted(SCATTERS))
def test_as_strided_scatter(key):
    """Values, node and gradients as PyTorch's. (Its AsStridedScatterBackward0 gives `input`
    the gradient inside the written window, zero outside it: the opposite of what a
    clone-then-write composite gives; followed here.)"""
    shape, layout, size, stride, offset = SCATTERS[key]
    grad = RNG.standard_normal(12)
    res = []
    for m in (torchish, torch):
        x, inp, src = _scatter_inputs(m, shape, layout)
        out = m.as_strided_scatter(inp, src, size, stride, offset) if m is torchish else \
            inp.as_strided_scatter(src, size, stride, offset)
        out.backward(m.tensor(grad.reshape(tuple(out.shape)), dtype=m.float32))
        res.append((out, x.grad, src.grad))
    _compare(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1].numpy(), res[1][1].numpy(), rtol=1e-6)
    np.testing.assert_allclose(res[0][2].numpy(), res[1][2].numpy(), rtol=1e-6)


def test_as_strided_scatter_refuses_strided_input_needing_grad():
    for m in (torchish, torch):
        x = m.ones(3, 4, requires_grad=True)
        with pytest.raises(RuntimeError, match="as_strided_scatter is currently only supported "
                                               "for contiguous inputs"):
            m.as_strided_scatter(x.t(), m.zeros(2), (2,), (1,))


def test_detach_copy_backward_refuses():
    for m in (torchish, torch):
        out = m.detach_copy(m.ones(2, requires_grad=True))
        assert out.requires_grad and out.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::detach_copy is not "
                                               "implemented"):
            out.sum().backward()


def test_native_batch_norm_updates_running_stats():
    outs = []
    for m in (torchish, torch):
        rm, rv = m.zeros(6), m.ones(6)
        m.native_batch_norm(m.tensor(X3, dtype=m.float32), None, None, rm, rv, True, 0.3, 1e-5)
        outs.append((rm.numpy(), rv.numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-5, atol=1e-6)


def test_native_dropout_draws_as_dropout():
    results = []
    for m in (torchish, torch):
        x = m.tensor(X3, dtype=m.float32).requires_grad_()
        m.manual_seed(3)
        out, mask = m.native_dropout(x, 0.3, True)
        m.manual_seed(3)
        ref = m.nn.functional.dropout(x, 0.3)
        assert out.grad_fn.name() == "NativeDropoutBackward0"
        out.sum().backward()
        results.append((out.detach().numpy(), mask.numpy(), ref.detach().numpy(),
                        x.grad.numpy(), str(mask.dtype)))
    ours, theirs = results
    np.testing.assert_array_equal(ours[0], ours[2])     # same draws as F.dropout
    np.testing.assert_array_equal(theirs[0], theirs[2])
    np.testing.assert_allclose(ours[3], ours[1] / 0.7, rtol=1e-6)
    assert ours[4] == theirs[4]
    np.testing.assert_array_equal(ours[0], theirs[0])   # and the same as PyTorch's


def test_embedding_bag_aten_tuple():
    for key, case in BAGS.items():
        res = []
        for m in (torchish, torch):
            w = m.tensor(EMB, dtype=m.float32).requires_grad_()
            args = tuple(m.ones(len(EMB_IDX)) * 0.5 if a == "w" else a for a in case["args"])
            r = m.embedding_bag(w, m.tensor(EMB_IDX), m.tensor(case["offsets"]), *args)
            r[0].sum().backward()
            res.append((r, w.grad))
        _compare(res[0][0], res[1][0])
        np.testing.assert_allclose(res[0][1].numpy(), res[1][1].numpy(), rtol=1e-5, err_msg=key)


def test_embedding_renorm_():
    res = []
    for m in (torchish, torch):
        w = m.tensor(EMB * 3, dtype=m.float32)
        r = m.embedding_renorm_(w, m.tensor([0, 1, 1, 4]), 1.0, 2.0)
        assert r is w
        res.append(w.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-5)


def _error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:   # noqa: BLE001 (any type; compared below)
            return type(e).__name__, str(e)
    return None


ERRORS = {
    "layer_norm_empty_shape": lambda m: m.native_layer_norm(m.ones(1, 2, 3), [], None, None,
                                                            1e-5),
    "layer_norm_shape": lambda m: m.native_layer_norm(m.ones(1, 2, 3), [2], None, None, 1e-5),
    "group_norm_numel": lambda m: m.native_group_norm(m.ones(2, 4, 3), None, None, 2, 4, 4, 2,
                                                      1e-5),
    "group_norm_groups": lambda m: m.native_group_norm(m.ones(2, 4, 3), None, None, 2, 4, 3, 3,
                                                       1e-5),
    "dropout_p": lambda m: m.native_dropout(m.ones(3), 1.5, True),
    "dropout_long": lambda m: m.native_dropout(m.ones(3, dtype=m.int64), 0.5, True),
    "frobenius_dims": lambda m: m.frobenius_norm(m.ones(2, 2, 2), [0, 1, 2]),
    "frobenius_long": lambda m: m.frobenius_norm(m.ones(2, 2, dtype=m.int64), [0]),
    "frobenius_no_dim": lambda m: m.frobenius_norm(m.ones(2, 2)),
    "nuclear_dim": lambda m: m.nuclear_norm(m.ones(2, 2, 2), [1]),
    "scatter_src": lambda m: m.as_strided_scatter(m.ones(12), m.ones(3), (2, 2), (3, 1)),
    "scatter_bounds": lambda m: m.as_strided_scatter(m.ones(4), m.ones(2, 2), (2, 2), (3, 1)),
    "copy_bounds": lambda m: m.as_strided_copy(m.ones(4), (2, 2), (3, 1)),
    "view_as_complex_grad": lambda m: m.view_as_complex_copy(m.ones(3, 2).requires_grad_()),
    "view_as_complex_shape": lambda m: m.view_as_complex_copy(m.ones(3, 3)),
    "view_as_real_real": lambda m: m.view_as_real_copy(m.ones(3)),
    "slice_inverse_bounds": lambda m: m.slice_inverse(m.ones(2, 3), m.zeros(5, 3), 0, 1, 3),
    "tbc_input": lambda m: m.conv_tbc(m.ones(2, 3), m.ones(3, 3, 4), m.ones(4)),
    "tbc_weight": lambda m: m.conv_tbc(m.ones(5, 2, 3), m.ones(3, 4), m.ones(4)),
    "tbc_channels": lambda m: m.conv_tbc(m.ones(5, 2, 3), m.ones(3, 2, 4), m.ones(4)),
    "tbc_bias": lambda m: m.conv_tbc(m.ones(5, 2, 3), m.ones(3, 3, 4), m.ones(2)),
    "tbc_bias_2d": lambda m: m.conv_tbc(m.ones(5, 2, 3), m.ones(3, 3, 4), m.ones(1, 4)),
    "tbc_pad_float": lambda m: m.conv_tbc(m.ones(5, 2, 3), m.ones(3, 3, 4), m.ones(4), 2.5),
    "tbc_too_short": lambda m: m.conv_tbc(m.ones(2, 2, 3), m.ones(5, 3, 4), m.ones(4)),
    "tbc_dtypes": lambda m: m.conv_tbc(m.ones(5, 2, 3).double(), m.ones(3, 3, 4), m.ones(4)),
    "bag_no_offsets": lambda m: m.embedding_bag(m.ones(5, 3), m.tensor([[1, 2]]), None),
    "renorm_leaf": lambda m: m.embedding_renorm_(m.ones(5, 3).requires_grad_(),
                                                 m.tensor([0]), 1.0, 2.0),
    "renorm_float_idx": lambda m: m.embedding_renorm_(m.ones(5, 3), m.tensor([0.]), 1.0, 2.0),
    "renorm_1d": lambda m: m.embedding_renorm_(m.ones(3), m.tensor([0]), 1.0, 2.0),
    "renorm_range": lambda m: m.embedding_renorm_(m.ones(5, 3), m.tensor([7]), 1.0, 2.0),
    "grid_2d_on_5d": lambda m: m.grid_sampler_2d(m.ones(1, 1, 2, 3, 3), m.ones(1, 2, 2, 2, 3),
                                                 0, 0, False),
    "affine_3d": lambda m: m.affine_grid_generator(m.ones(2, 2, 3), [2, 1, 4], True),
    "rlshift_float": lambda m: m.tensor([1, 2]).__rlshift__(2.5),
    "delitem": lambda m: m.ones(3).__delitem__(0),
    "values_copy_dense": lambda m: m.values_copy(m.ones(3)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors(name):
    theirs = _error(lambda: ERRORS[name](torch))
    assert theirs is not None
    assert _error(lambda: ERRORS[name](torchish)) == theirs


def test_native_norm_is_sparse_only():
    for m in (torchish, torch):
        with pytest.raises(NotImplementedError, match="Could not run 'aten::native_norm' with "
                                                      "arguments from the 'CPU' backend"):
            m.native_norm(m.ones(3))


def test_deprecation_warnings():
    for name, call in (("frobenius_norm", lambda m: m.frobenius_norm(m.ones(2, 2), [0])),
                       ("nuclear_norm", lambda m: m.nuclear_norm(m.ones(2, 2)))):
        msgs = []
        for m in (torchish, torch):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                call(m)
            msgs.append([str(x.message).split(" (Triggered")[0] for x in w])
        assert msgs[0] == msgs[1], name


@pytest.mark.parametrize("expr", ["2 << x", "x.__rlshift__(3)", "64 >> x", "x.__rrshift__(7)",
                                  "True << x", "x.bool().__rlshift__(1)"])
def test_reflected_shifts(expr):
    res = []
    for m in (torchish, torch):
        r = eval(expr, {"x": m.tensor([1, 2, 3])})
        res.append((r.tolist(), str(r.dtype)))
    assert res[0] == res[1]


def test_small_switches():
    for m in (torchish, torch):
        x = m.ones(2)
        assert m.set_flush_denormal(False) is True
        assert m.init_num_threads() is None
        assert m.is_distributed(x) is False and x.is_distributed() is False
    x, y = (m.tensor([1 + 2j, 3 - 1j]) for m in (torchish, torch))
    assert torchish.conj_physical_(x) is x and torch.conj_physical_(y) is y
    assert x.tolist() == y.tolist()


TRACED = {
    "native_group_norm": lambda m, x: m.native_group_norm(x, None, None, 2, 6, 5, 3, 1e-5),
    "native_layer_norm": lambda m, x: m.native_layer_norm(x, [5], None, None, 1e-5),
    "native_batch_norm": lambda m, x: m.native_batch_norm(x, None, None, None, None, True, 0.1,
                                                          1e-5),
    "native_dropout_eval": lambda m, x: m.native_dropout(x, 0.2, False),
    "frobenius_norm": lambda m, x: m.frobenius_norm(x, [1, 2]),
    "as_strided_scatter": lambda m, x: m.as_strided_scatter(x, x[0, :2, :2] * 2, (2, 2),
                                                            (5, 1), 3),
    "as_strided_copy": lambda m, x: m.as_strided_copy(x, (2, 2), (5, 1), 3),
    "conv_tbc": lambda m, x: m.conv_tbc(x.transpose(0, 2).contiguous(),
                                        x[:, :3, :4].transpose(0, 1).contiguous(),
                                        x[0, 0, :4], 1),
    "view_as_real_copy": lambda m, x: m.view_as_real_copy(m.complex(x, x * 2)),
    "embedding_bag_max": lambda m, x: m.embedding_bag(x[0], m.tensor([1, 2, 4, 0, 3]),
                                                      m.tensor([0, 2]), False, 2),
}


@pytest.mark.parametrize("name", sorted(TRACED))
def test_traced_matches_eager(name):
    """Inside `torchish.compile` (JAX tracers) the ops give their eager values."""
    x = torchish.tensor(X3, dtype=torchish.float32)
    eager = _outputs(TRACED[name](torchish, x))
    compiled = _outputs(torchish.compile(lambda t: TRACED[name](torchish, t))(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _outputs(TRACED[name](torch, torch.tensor(X3, dtype=torch.float32)))
    for e, c, t in zip(eager, compiled, theirs):
        np.testing.assert_allclose(c.numpy(), e.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-5)


HASHES = {
    "all": lambda m: m.hash_tensor(m.tensor(M34, dtype=m.float32).requires_grad_()),
    "dim": lambda m: m.hash_tensor(m.tensor(M34, dtype=m.float64), 1),
    "dims_keepdim": lambda m: m.hash_tensor(m.tensor(X3, dtype=m.float32), [0, 2],
                                            keepdim=True),
    "method": lambda m: m.tensor(M34, dtype=m.float32).hash_tensor(-1, keepdim=True),
    "ints": lambda m: m.hash_tensor(m.tensor([-1, 2, 3])),
    "bools": lambda m: m.hash_tensor(m.tensor([True, False, True])),
    "half": lambda m: m.hash_tensor(m.tensor([1.5, -3.25], dtype=m.float16)),
    "scalar": lambda m: m.hash_tensor(m.tensor(2.5)),
    "empty_other_dim": lambda m: m.hash_tensor(m.ones(0, 3), 1),
    "traced": lambda m: (m.compile(lambda t: m.hash_tensor(t, 0)) if m is torchish else
                         (lambda t: m.hash_tensor(t, 0)))(m.tensor(M34, dtype=m.float32)),
}


@pytest.mark.parametrize("name", sorted(HASHES))
def test_hash_tensor(name):
    ours, theirs = HASHES[name](torchish), HASHES[name](torch)
    assert str(ours.dtype) == str(theirs.dtype) == "torch.uint64"
    assert ours.tolist() == theirs.tolist() and ours.grad_fn is None


@pytest.mark.parametrize("call", [
    lambda m: m.hash_tensor(m.tensor([1 + 2j])),
    lambda m: m.hash_tensor(m.ones(0)),
    lambda m: m.hash_tensor(m.ones(2), mode=1),
    lambda m: m.hash_tensor(m.ones(0, 3), -2),
])
def test_hash_tensor_errors(call):
    theirs = _error(lambda: call(torch))
    assert theirs is not None and _error(lambda: call(torchish)) == theirs


HALF_NORMS = {
    "layer": lambda m, t, p: m.native_layer_norm(t, [5], p(5), None, 1e-5),
    "batch": lambda m, t, p: m.native_batch_norm(t, p(6), None, None, None, True, 0.1, 1e-5),
    "batch_running": lambda m, t, p: m.native_batch_norm(t, None, None, p(6) * 0, p(6), True,
                                                         0.1, 1e-5),
    "group": lambda m, t, p: m.native_group_norm(t, p(6), None, 2, 6, 5, 3, 1e-5),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("param", ["same", "float32"])
@pytest.mark.parametrize("name", sorted(HALF_NORMS))
def test_native_norm_half_statistics(name, param, dtype):
    """A half input's statistics come back in its dtype, or float32 beside a float32
    parameter (autocast's mix), as PyTorch's kernels return them."""
    res = []
    for m in (torchish, torch):
        t = m.tensor(X3, dtype=m.float32).to(getattr(m, dtype))
        res.append(HALF_NORMS[name](m, t, lambda n: m.ones(n, dtype=t.dtype if param == "same"
                                                           else m.float32)))
    for o, t in zip(*res):
        assert str(o.dtype) == str(t.dtype)
        np.testing.assert_allclose(o.float().numpy(), t.float().numpy(), rtol=1e-2, atol=1e-2)
