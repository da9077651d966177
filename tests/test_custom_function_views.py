"""Views returned by a custom autograd Function (made in its forward, or an input returned
as-is) refuse in-place writes with PyTorch's error, as do views of them; against real PyTorch."""
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
