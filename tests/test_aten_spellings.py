"""`torch.*` functions with ATen's signatures (losses taking an int `reduction`, layers in
ATen's argument order, recurrent cells over explicit weights, `constant_pad_nd`) and the
top-level switches and symbolic-size helpers, against PyTorch: values, gradients, grad_fn."""
import math

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A, B, W = (RNG.standard_normal(s).tolist() for s in ((4, 3), (4, 3), (5, 3)))
POS = RNG.uniform(0.1, 1.0, (4, 3)).tolist()
SIGN = [1.0, -1.0, 1.0, -1.0]
IMG = RNG.standard_normal((1, 2, 5, 5)).tolist()
KER = RNG.standard_normal((3, 2, 3, 3)).tolist()

CALLS = {
    "kl_div_default": lambda m, a, b: m.kl_div(a.log_softmax(1), b.softmax(1)),
    "kl_div_mean": lambda m, a, b: m.kl_div(a, b, 1),
    "hinge_embedding_mean": lambda m, a, b: m.hinge_embedding_loss(a, b, 0.5, 1),
    "kl_div_none": lambda m, a, b: m.kl_div(a, b, 0),
    "kl_div_sum_log_target": lambda m, a, b: m.kl_div(a, b, 2, log_target=True),
    "kl_div_other_int": lambda m, a, b: m.kl_div(a, b, 5),
    "bce_logits": lambda m, a, b: m.binary_cross_entropy_with_logits(
        a, m.tensor(POS), None, m.tensor(POS[0]), 2),
    "cosine_embedding": lambda m, a, b: m.cosine_embedding_loss(a, b, m.tensor(SIGN), 0.1, 0),
    "hinge_embedding": lambda m, a, b: m.hinge_embedding_loss(a, m.tensor([SIGN] * 3).t()),
    "margin_ranking": lambda m, a, b: m.margin_ranking_loss(a[:, 0], b[:, 0], m.tensor(SIGN),
                                                            0.2, 2),
    "poisson_nll": lambda m, a, b: m.poisson_nll_loss(a, m.tensor(POS), True, True, 1e-8, 1),
    "triplet_margin": lambda m, a, b: m.triplet_margin_loss(a, b, a * 0.5, 1.0, 2.0, 1e-6,
                                                            True, 1),
    "batch_norm": lambda m, a, b: m.batch_norm(a, b[0], b[1], None, None, True, 0.1, 1e-5,
                                               False),
    "instance_norm": lambda m, a, b: m.instance_norm(a.reshape(2, 2, 3), b[0, :2], b[1, :2],
                                                     None, None, True, 0.1, 1e-5, False),
    "bilinear": lambda m, a, b: m.bilinear(a, b, m.tensor(W[:2]).reshape(2, 3, 1).expand(
        2, 3, 3), m.tensor([0.5, -0.5])),
    "convolution": lambda m, a, b: m.convolution(m.tensor(IMG) * a.sum(), m.tensor(KER),
                                                 None, [1, 1], [1, 0], [1, 1], False, [0, 0], 1),
    "conv_transpose": lambda m, a, b: m.convolution(m.tensor(IMG) * a.sum(),
                                                    m.tensor(KER).transpose(0, 1), None,
                                                    [2, 2], [1, 1], [1, 1], True, [1, 1], 1),
    "constant_pad_nd": lambda m, a, b: m.constant_pad_nd(a, [1, -1, 2, 0], 2.5),
    "rnn_tanh_cell": lambda m, a, b: m.rnn_tanh_cell(a, b[:, :2], m.tensor(W[:2]),
                                                     m.tensor(W[:2])[:, :2]),
    "rnn_relu_cell": lambda m, a, b: m.rnn_relu_cell(a, b[:, :2], m.tensor(W[:2]),
                                                     m.tensor(W[:2])[:, :2], b[0, :2], None),
    "gru_cell": lambda m, a, b: m.gru_cell(a, b[:, :1], m.tensor(W[:3]),
                                           m.tensor(W[:3])[:, :1], b[0], b[1]),
    "lstm_cell": lambda m, a, b: m.lstm_cell(a, (b[:, :1], b[:, 1:2]), m.tensor(W[:4]),
                                             m.tensor(W[:4])[:, :1])[1],
}


def _run(m, name):
    a, b = m.tensor(A, requires_grad=True), m.tensor(B, requires_grad=True)
    out = CALLS[name](m, a, b)
    weight = m.arange(out.numel(), dtype=out.dtype).reshape(out.shape) / 7 + 1
    (out * weight).sum().backward()
    return out, a.grad, b.grad


@pytest.mark.parametrize("name", CALLS)
def test_matches_pytorch(name):
    ours, theirs = _run(torchish, name), _run(torch, name)
    assert ours[0].grad_fn.name() == theirs[0].grad_fn.name()
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)


def test_lstm_cell_state_errors():
    for m in (torchish, torch):
        x, w = m.ones(1, 2), m.ones(4, 2)
        with pytest.raises(TypeError, match=r"lstm_cell\(\): argument 'hx' \(position 2\) "
                                            r"must be tuple of Tensors, not Tensor"):
            m.lstm_cell(x, m.ones(1, 1), w, m.ones(4, 1))
        with pytest.raises(RuntimeError, match="lstm_cell expects two hidden states"):
            m.lstm_cell(x, (m.ones(1, 1),), w, m.ones(4, 1))


SYM = [("sym_int", (3.7,)), ("sym_int", (-3.7,)), ("sym_int", (5,)), ("sym_float", (3,)),
       ("sym_max", (2, 3.5)), ("sym_max", (3, 2.5)), ("sym_max", (3, 2)),
       ("sym_min", (2, 3)), ("sym_min", (2.0, 3)), ("sym_not", (True,)),
       ("sym_ite", (False, 1, 2)), ("sym_sqrt", (4,)), ("sym_sum", ([1, 2, 3],)),
       ("sym_sum", ([],))]


@pytest.mark.parametrize("name, args", SYM)
def test_symbolic_size_helpers(name, args):
    ours, theirs = getattr(torchish, name)(*args), getattr(torch, name)(*args)
    assert type(ours) is type(theirs) and (ours == theirs or math.isnan(theirs))


def test_warn_always_repeats_once_only_warnings():
    import warnings
    from torchish._warnings import warn_once
    assert torchish.is_warn_always_enabled() is torch.is_warn_always_enabled() is False
    torchish.set_warn_always(True)
    try:
        assert torchish.is_warn_always_enabled()
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for _ in range(2):
                warn_once("torchish test: repeated")
        assert len(seen) == 2
    finally:
        torchish.set_warn_always(False)


def test_set_anomaly_enabled():
    try:
        torchish.set_anomaly_enabled(True, check_nan=False)
        assert torchish.is_anomaly_enabled() and not torchish.is_anomaly_check_nan_enabled()
    finally:
        torchish.set_anomaly_enabled(False)
    assert not torchish.is_anomaly_enabled() and torchish.is_anomaly_check_nan_enabled()


UNSAFE = {
    "chunk": lambda m, x: x.unsafe_chunk(2),
    "split": lambda m, x: x.unsafe_split(2),
    "split_with_sizes": lambda m, x: x.unsafe_split_with_sizes([1, 3]),
    "torch_split_dim1": lambda m, x: m.unsafe_split(x, 2, 1),
    "torch_chunk_dim1": lambda m, x: m.unsafe_chunk(x, 3, 1),
    "prelu_method": lambda m, x: [x.prelu(m.tensor([0.25]))],
}


@pytest.mark.parametrize("name", UNSAFE)
def test_unsafe_splits_and_methods(name):
    def run(m):
        x = m.tensor(A, requires_grad=True)
        parts = UNSAFE[name](m, x)
        return [(p.grad_fn.name(), p.tolist()) for p in parts]
    assert run(torchish) == run(torch)


def test_unsafe_split_refuses_a_list():
    for m, where in ((torchish, 2), (torch, 2)):
        with pytest.raises(TypeError, match=rf"unsafe_split\(\): argument 'split_size' "
                                            rf"\(position {where}\) must be int, not list"):
            m.unsafe_split(m.ones(3), [1, 2])
    for m in (torchish, torch):
        with pytest.raises(TypeError, match=r"\(position 1\) must be int, not list"):
            m.ones(3).unsafe_split([1, 2])


def test_error_classes_device_modules_and_build_flags():
    for m in (torchish, torch):
        assert m.cuda.OutOfMemoryError is m.OutOfMemoryError
        assert issubclass(m.OutOfMemoryError, RuntimeError)
        assert issubclass(m.AcceleratorError, RuntimeError)
        assert m.get_device_module() is m.cpu and m.get_device_module("cpu") is m.cpu
        assert m.get_device_module(m.device("cuda")) is m.cuda
        assert m.compiled_with_cxx11_abi() is True and m.has_lapack is True
        assert not isinstance(3, m.SymInt)
    assert repr(torchish.OutOfMemoryError) == "<class 'torchish.OutOfMemoryError'>"


def test_thread_count_is_pytorchs():
    assert torchish.get_num_threads() == torch.get_num_threads()


def test_fill_out_of_place():
    def run(m):
        x = m.randn(2, 3, requires_grad=True)
        v = m.tensor(2.0, requires_grad=True)
        r = m.fill(x, v)
        r.sum().backward()
        s = m.fill(x, 3)
        out = [r.grad_fn.name(), len(r.grad_fn.next_functions), x.grad.tolist(), v.grad.item(),
               s.grad_fn.name(), m.fill(m.ones(2, dtype=m.int64), 2.7).tolist()]
        for bad in (lambda: m.fill(m.ones(2, dtype=m.int8), 300), lambda: m.fill(x, m.ones(2))):
            with pytest.raises(RuntimeError) as err:
                bad()
            out.append(str(err.value))
        return out
    assert run(torchish) == run(torch)
