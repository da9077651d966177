"""Result memory layouts against PyTorch: strides, `is_contiguous(memory_format=...)` and
values of pointwise ops on transposed / channels_last operands (TensorIterator's rule), copies
(`*_like`, clone, contiguous, `to`), channels_last through conv / pooling / norm / upsampling
modules, and views over such results (`view` errors, `reshape`, storage offsets)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

R = np.random.RandomState(0)
A4 = R.randn(2, 3, 4, 5).astype(np.float32)
B4 = R.randn(2, 3, 4, 5).astype(np.float32)
M = R.randn(3, 4).astype(np.float32)
N = R.randn(4, 3).astype(np.float32)
ROW = R.randn(3).astype(np.float32)
COL = R.randn(4, 1).astype(np.float32)
BIAS = R.randn(1, 3, 1, 1).astype(np.float32)
W = R.randn(6, 3, 3, 3).astype(np.float32)
CL1 = R.randn(2, 3, 1, 1).astype(np.float32)


def _layout(lib, t):
    return (tuple(t.shape), tuple(t.stride()), t.is_contiguous(),
            t.ndim == 4 and t.is_contiguous(memory_format=lib.channels_last))


def _both(fn):
    """fn(lib, T) run with PyTorch and torchish; T(array) makes a tensor of the library."""
    return [fn(lib, lambda a: lib.tensor(a)) for lib in (torch, torchish)]


def _cl(lib, a):
    return lib.tensor(a).contiguous(memory_format=lib.channels_last)


POINTWISE = {
    "cl_plus_scalar": lambda L: _cl(L, A4) + 1,
    "cl_exp": lambda L: _cl(L, A4).exp(),
    "cl_times_cl": lambda L: _cl(L, A4) * _cl(L, B4),
    "cl_plus_contiguous": lambda L: _cl(L, A4) + L.tensor(B4),
    "contiguous_plus_cl": lambda L: L.tensor(A4) + _cl(L, B4),
    "cl_times_bias": lambda L: _cl(L, A4) * L.tensor(BIAS),
    "bias_times_cl": lambda L: L.tensor(BIAS) * _cl(L, A4),
    "cl_relu": lambda L: L.relu(_cl(L, A4)),
    "cl_where": lambda L: L.where(_cl(L, A4) > 0, _cl(L, A4), 0.0),
    "cl_lerp": lambda L: L.lerp(_cl(L, A4), L.tensor(B4), 0.5),
    "cl_addcmul": lambda L: L.addcmul(_cl(L, A4), _cl(L, A4), L.tensor(B4)),
    "cl_clamp": lambda L: _cl(L, A4).clamp(-0.5, 0.5),
    "cl_pow": lambda L: _cl(L, A4).pow(2),
    "cl_eq": lambda L: _cl(L, A4) == 0,
    "cl_double": lambda L: _cl(L, A4).double(),
    "cl_n111_plus_scalar": lambda L: _cl(L, CL1) + 1,
    "cl_n111_times": lambda L: _cl(L, CL1) * L.tensor(CL1),
    "t_plus_scalar": lambda L: L.tensor(M).t() + 1,
    "scalar_minus_t": lambda L: 1 - L.tensor(M).t(),
    "scalar_pow_t": lambda L: 2 ** L.tensor(M).t(),
    "t_floor_divide": lambda L: L.tensor(M).t() // 2,
    "t_masked_fill": lambda L: L.tensor(M).t().masked_fill(L.tensor(N) > 0, 1.0),
    "t_exp": lambda L: L.tensor(M).t().exp(),
    "t_plus_row": lambda L: L.tensor(M).t() + L.tensor(ROW),
    "t_plus_col": lambda L: L.tensor(M).t() + L.tensor(COL),
    "t_times_t": lambda L: L.tensor(M).t() * L.tensor(N),
    "t_sliced": lambda L: L.tensor(M).t()[::2] * 2,
    "expand_plus_t": lambda L: L.tensor(COL).expand(4, 3) + L.tensor(M).t(),
    "permute_exp": lambda L: L.tensor(A4).permute(2, 0, 3, 1).exp(),
    "broadcast_permuted": lambda L: L.tensor(A4[0]).permute(2, 0, 1) + L.tensor(M),
    "empty_t_exp": lambda L: L.zeros(0, 3).t().exp(),
    "empty_t_plus_col": lambda L: L.zeros(0, 3).t() + L.tensor(COL[:3]),
    "empty_permuted_plus": lambda L: L.zeros(2, 0, 3).permute(2, 0, 1) + L.tensor(CL1[0]),
    "t_where": lambda L: L.where(L.tensor(M).t() > 0, L.tensor(N), L.tensor(M).t()),
}


@pytest.mark.parametrize("name", sorted(POINTWISE))
def test_pointwise_result_follows_operands(name):
    expected, r = (POINTWISE[name](lib) for lib in (torch, torchish))
    assert _layout(torchish, r) == _layout(torch, expected)
    np.testing.assert_allclose(r.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)


def test_copies_keep_or_set_layouts():
    def run(lib, T):
        t, cl = T(M).t(), _cl(lib, A4)
        outs = [lib.empty_like(t), lib.rand_like(cl), t.clone(), cl.clone(), t.contiguous(),
                t.clone(memory_format=lib.contiguous_format), cl.contiguous(),
                t[::2].clone(), T(A4).to(memory_format=lib.channels_last)]
        return [_layout(lib, o) for o in outs]
    torch_got, ours = _both(run)
    assert torch_got == ours


def test_like_factories():
    def run(lib, T):
        t, cl = T(M).t(), _cl(lib, A4)
        with pytest.raises(RuntimeError) as info:
            lib.zeros_like(t, memory_format=lib.channels_last)
        return [str(info.value)] + [_layout(lib, o) for o in (
            lib.zeros_like(t), lib.ones_like(cl), lib.full_like(cl, 2.0),
            lib.zeros_like(t, dtype=lib.int64), lib.ones_like(t, requires_grad=True),
            lib.zeros_like(cl, memory_format=lib.contiguous_format))]
    torch_got, ours = _both(run)
    assert torch_got == ours


def test_views_of_a_channels_last_result():
    got = []
    for lib in (torch, torchish):
        y = _cl(lib, A4) + 1
        with pytest.raises(RuntimeError) as info:
            y.view(-1)
        z = y[1, 2]
        got.append([str(info.value), tuple(y.view(2, 3, 20).stride()),
                    y.reshape(-1).tolist(), z.storage_offset(), tuple(z.stride()),
                    (z.data_ptr() - y.data_ptr()) // y.element_size(),
                    y.flatten(1).is_contiguous(), y.transpose(1, 3).is_contiguous()])
        y.add_(1)   # in place: the layout stays
        got[-1] += [_layout(lib, y), y.tolist()]
    assert got[0] == got[1]


def test_view_error_on_a_transposed_result():
    got = []
    for lib in (torch, torchish):
        y = lib.tensor(M).t() * 2
        with pytest.raises(RuntimeError) as info:
            y.view(12)
        got.append((str(info.value), y.reshape(12).tolist(), y.T.is_contiguous()))
    assert got[0] == got[1]


def test_gradients_through_laid_out_results():
    got = []
    for lib in (torch, torchish):
        x = lib.tensor(M, requires_grad=True)
        c = lib.tensor(A4, requires_grad=True)
        y = x.t().exp() * 2
        z = (c.contiguous(memory_format=lib.channels_last) + 1).sigmoid()
        (y.sum() + (z * z).sum()).backward()
        got.append([y.grad_fn.name(), z.grad_fn.name(), _layout(lib, y), _layout(lib, z),
                    x.grad.numpy(), c.grad.numpy()])
    assert got[0][:4] == got[1][:4]
    for a, b in zip(got[0][4:], got[1][4:]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_channels_last_model():
    def run(lib):
        lib.manual_seed(0)
        nn = lib.nn
        model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Conv2d(4, 4, 1), nn.AvgPool2d(1),
                              nn.Upsample(scale_factor=2), nn.AdaptiveAvgPool2d(1))
        model.to(memory_format=lib.channels_last)
        x = lib.tensor(A4)   # contiguous: the channels_last weights decide
        rows = []
        for m in model:
            x = m(x)
            rows.append((type(m).__name__, _layout(lib, x)))
        return rows, x.detach().numpy()
    (expected, value), (got, ours) = run(torch), run(torchish)
    assert got == expected
    np.testing.assert_allclose(ours, value, rtol=1e-5, atol=1e-5)


def test_channels_last_training_steps():
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4))
        model.to(memory_format=lib.channels_last)
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        x = _cl(lib, A4)
        losses = []
        for _ in range(2):   # the channels_last parameters are updated in place
            opt.zero_grad()
            loss = model(x).relu().square().mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        w = model[0].weight
        return _layout(lib, w), losses, w.detach().numpy()
    expected, ours = run(torch), run(torchish)
    assert ours[0] == expected[0]
    for a, b in zip(expected[1:], ours[1:]):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


NN = {
    "conv2d": lambda L, F: F.conv2d(_cl(L, A4), L.tensor(W)),
    "conv2d_weight_cl": lambda L, F: F.conv2d(L.tensor(A4), _cl(L, W)),
    "conv_transpose2d": lambda L, F: F.conv_transpose2d(_cl(L, A4), L.tensor(W[:3, :2])),
    "max_pool2d_indices": lambda L, F: F.max_pool2d(_cl(L, A4), 2, return_indices=True)[1],
    "avg_pool2d": lambda L, F: F.avg_pool2d(_cl(L, A4), 2),
    "adaptive_avg_pool2d": lambda L, F: F.adaptive_avg_pool2d(_cl(L, A4), 2),
    "adaptive_avg_pool2d_1": lambda L, F: F.adaptive_avg_pool2d(_cl(L, A4), 1),
    "adaptive_max_pool2d": lambda L, F: F.adaptive_max_pool2d(_cl(L, A4), 2),
    "batch_norm": lambda L, F: F.batch_norm(_cl(L, A4), None, None, training=True),
    "group_norm": lambda L, F: F.group_norm(_cl(L, A4), 3),
    "layer_norm": lambda L, F: F.layer_norm(_cl(L, A4), (5,)),
    "softmax": lambda L, F: F.softmax(_cl(L, A4), 1),
    "nearest": lambda L, F: F.interpolate(_cl(L, A4), size=(3, 3)),
    "bilinear": lambda L, F: F.interpolate(_cl(L, A4), scale_factor=2, mode="bilinear"),
    "gelu": lambda L, F: F.gelu(_cl(L, A4)),
    "logsigmoid": lambda L, F: F.logsigmoid(_cl(L, A4)),
    "prelu": lambda L, F: F.prelu(_cl(L, A4), L.tensor(ROW)),
    "mse_none": lambda L, F: F.mse_loss(_cl(L, A4), L.tensor(B4), reduction="none"),
    "pad_constant": lambda L, F: F.pad(_cl(L, A4), (1, 1)),
    "pad_circular": lambda L, F: F.pad(_cl(L, A4), (1, 1, 1, 1), mode="circular"),
    "cat_cl": lambda L, F: L.cat([_cl(L, A4), _cl(L, B4)], 1),
    "cat_mixed": lambda L, F: L.cat([_cl(L, A4), L.tensor(B4)], 1),
    "max_pool1d": lambda L, F: F.max_pool1d(L.tensor(M[None]).transpose(1, 2).contiguous()
                                            .transpose(1, 2), 2),
    "sum_dim1": lambda L, F: _cl(L, A4).sum(1, keepdim=True),
    "mean_hw": lambda L, F: _cl(L, A4).mean((2, 3)),
    "amax_w": lambda L, F: _cl(L, A4).amax(3, keepdim=True),
}


@pytest.mark.parametrize("name", sorted(NN))
def test_nn_layouts(name):
    expected, r = (NN[name](lib, lib.nn.functional) for lib in (torch, torchish))
    assert _layout(torchish, r) == _layout(torch, expected)
    np.testing.assert_allclose(r.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_meta_results_follow_operands():
    got = []   # (PyTorch's CPU strides: its meta tensors take seconds to set up)
    for lib, device in ((torch, "cpu"), (torchish, "meta")):
        x = lib.empty(2, 3, 4, 5, device=device).contiguous(memory_format=lib.channels_last)
        got.append([_layout(lib, x + 1), _layout(lib, x.exp()),
                    tuple(lib.empty(3, 4, device=device).t().mul(2).stride())])
    assert got[0] == got[1]

