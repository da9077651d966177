"""Views returned by a custom autograd Function (made in its forward, or an input returned
as-is) refuse in-place writes with PyTorch's error, as do views of them; a Function that
modifies a view in place (mark_dirty) puts CopySlices on its base. Against real PyTorch."""
import pytest

import torchish

torch = pytest.importorskip("torch")


def _functions(T):
    class ViewOf(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.view_as(a)

        @staticmethod
        def backward(ctx, g):
            return g

    class Same(T.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g
    return ViewOf, Same


def _hooked_relu(T):
    relu = T.nn.ReLU(inplace=True)
    relu.register_full_backward_hook(lambda *args: None)
    return relu(T.ones(2, requires_grad=True) * 1)


CASES = {
    "view made in forward": lambda T, fns, x: fns[0].apply(x).add_(1),
    "input returned as-is": lambda T, fns, x: fns[1].apply(x).add_(1),
    "view of such a view": lambda T, fns, x: fns[1].apply(x)[:1].add_(1),
    "no input needs grad": lambda T, fns, x: fns[0].apply(T.ones(2)).add_(1),
    "full backward hook on an in-place module": lambda T, fns, x: _hooked_relu(T),
}


def _outcome(T, case):
    x = T.ones(2, requires_grad=True) * 1
    try:
        CASES[case](T, _functions(T), x)
    except RuntimeError as e:
        return str(e)
    return "ok"


@pytest.mark.parametrize("case", list(CASES))
def test_inplace_on_custom_function_view_matches_torch(case):
    assert _outcome(torchish, case) == _outcome(torch, case)


def _scale_view_inplace(T):
    class ScaleInplace(T.autograd.Function):
        @staticmethod
        def forward(ctx, v, w):
            ctx.save_for_backward(w)
            v.mul_(w)
            ctx.mark_dirty(v)
            return v

        @staticmethod
        def backward(ctx, g):
            (w,) = ctx.saved_tensors
            return g * w, None if not ctx.needs_input_grad[1] else g * 2
    return ScaleInplace


def _dirty_view_log(T, column):
    x = T.arange(1.0, 7.0).reshape(2, 3).requires_grad_()
    w = T.tensor([3.0, 4.0], requires_grad=True)
    base = x * 1
    view = base.t()[column] if column else base[:, 1]
    out = _scale_view_inplace(T).apply(view, w)
    log = [out is view, out.grad_fn.name(), base.grad_fn.name(), out._version,
           [f.name() if f else None for f, _ in base.grad_fn.next_functions], base.tolist()]
    (g,) = T.autograd.grad((base ** 2).sum(), x, create_graph=True)
    g.sum().backward()
    return log + [g.tolist(), x.grad.tolist(), w.grad.tolist()]


@pytest.mark.parametrize("column", [0, 2])
def test_mark_dirty_on_a_view_rebases_its_base(column):
    assert _dirty_view_log(torchish, column) == _dirty_view_log(torch, column)
