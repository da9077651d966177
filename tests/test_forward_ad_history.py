"""Forward-mode AD tangents on the autograd tape, against PyTorch: a tangent that requires grad
(or a primal that does) gives gradients through `unpack_dual(...).tangent` (forward-over-
reverse), in float32 and float64; make_dual keeps a tangent's dtype, copies it into the
primal's strides, and refuses sparse tensors with PyTorch's errors."""
import pytest

import torchish
from log_compare import assert_logs_match

torch = pytest.importorskip("torch")


def _history(T, dtype):
    fw = T.autograd.forward_ad
    F = T.nn.functional
    x = T.tensor([[0.5, 1.0, 2.0], [-1.0, 0.25, 1.5]], dtype=dtype, requires_grad=True)
    t = T.tensor([[1.0, -1.0, 0.5], [0.5, 2.0, -0.25]], dtype=dtype, requires_grad=True)
    w = T.tensor([[0.5, -1.0, 0.25], [1.0, 0.5, -0.5]], dtype=dtype, requires_grad=True)
    log = []
    with fw.dual_level():
        d = fw.make_dual(x, t)
        log.append(fw.unpack_dual(d).tangent is t)
        y = (d.sin() * d)[:, 1:] + F.linear(d, w).sigmoid()
        p, tan = fw.unpack_dual(y.sum(0))
        log += [tan.requires_grad, p.requires_grad, tan.dtype]
        (tan * T.tensor([1.0, -2.0], dtype=dtype)).sum().backward()
    log += [x.grad.tolist(), t.grad.tolist(), w.grad.tolist()]
    # only the tangent requires grad: the primal has no history
    u = T.tensor([1.0, 2.0], dtype=dtype, requires_grad=True)
    with fw.dual_level():
        out = fw.make_dual(T.tensor([0.5, 1.5], dtype=dtype), u).pow(3)
        tan = fw.unpack_dual(out).tangent
        log += [tan.requires_grad, fw.unpack_dual(out).primal.requires_grad]
        tan.sum().backward()
    return log + [u.grad.tolist()]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tangents_record_on_the_tape(dtype):
    ours = _history(torchish, getattr(torchish, dtype))
    theirs = _history(torch, getattr(torch, dtype))
    assert str(ours.pop(3)) == str(theirs.pop(3))   # the tangent's dtype
    assert_logs_match(ours, theirs, rtol=1e-5, atol=1e-6)


def test_no_history_under_no_grad():
    def run(T):
        fw = T.autograd.forward_ad
        t = T.ones(2, requires_grad=True)
        with fw.dual_level(), T.no_grad():
            return fw.unpack_dual(fw.make_dual(T.ones(2), t) * 3).tangent.requires_grad
    assert run(torchish) == run(torch)


def test_inplace_tangent_history():
    def run(T):
        fw = T.autograd.forward_ad
        x = T.tensor([0.5, 1.0, 2.0], requires_grad=True)
        p = T.tensor([1.5, -1.0, 0.5], requires_grad=True)
        t = T.tensor([1.0, -1.0, 0.5], requires_grad=True)
        with fw.dual_level():
            y = x.clone()
            y.mul_(fw.make_dual(p, t))
            y.sin_()
            (fw.unpack_dual(y).tangent * T.tensor([1.0, 2.0, 3.0])).sum().backward()
        return [x.grad.tolist(), p.grad.tolist(), t.grad.tolist()]
    assert_logs_match(run(torchish), run(torch), rtol=1e-5, atol=1e-6)


def _tangent_kinds(T):
    fw = T.autograd.forward_ad
    log = []
    with fw.dual_level():
        for primal, tangent in ((T.ones(2), T.full((2,), 1 / 3, dtype=T.float64)),
                                (T.ones(2, dtype=T.float64), T.ones(2)),
                                (T.ones(2), T.ones(2, dtype=T.complex64))):
            tan = fw.unpack_dual(fw.make_dual(primal, tangent)).tangent
            log.append((tan is tangent, str(tan.dtype), tan.tolist()))
        tangent = T.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
        for primal in (T.zeros(2, 3), T.zeros(3, 2).t()):
            tan = fw.unpack_dual(fw.make_dual(primal, tangent.t())).tangent
            log.append((tan.stride(), tan.tolist(), tan is tangent))
            (tan * T.tensor([1.0, 2.0, 3.0])).sum().backward()
        log.append(tangent.grad.tolist())
        sparse = T.eye(2).to_sparse()
        for primal, tangent in ((T.ones(2, 2), sparse), (sparse, T.ones(2, 2)),
                                (sparse, sparse)):
            try:
                fw.make_dual(primal, tangent)
            except NotImplementedError as e:
                log.append(str(e))
    return log


def test_make_dual_tangent_dtype_strides_and_layout():
    assert _tangent_kinds(torchish) == _tangent_kinds(torch)


def test_custom_function_jvp_records_as_pytorch():
    def run(T):
        class Cube(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_forward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def jvp(ctx, tx):
                (x,) = ctx.saved_tensors
                log.append(T.is_grad_enabled())
                return 3 * x ** 2 * tx
        log = []
        fw = T.autograd.forward_ad
        t = T.tensor([1.0, 2.0], requires_grad=True)
        x = T.tensor([0.5, 1.5], requires_grad=True)
        with fw.dual_level():
            tan = fw.unpack_dual(Cube.apply(fw.make_dual(x, t))).tangent
            log.append(type(tan.grad_fn).__name__)
            tan.sum().backward()
        return log + [t.grad.tolist(), x.grad.tolist()]
    assert run(torchish) == run(torch)
