"""Checks autograd makes on what user code hands it, against real PyTorch: a custom Function's
gradient of the wrong shape (refused) or of a broadcast shape (summed back), of the wrong type
or for a non-tensor input, what its forward saves or marks dirty; grad()'s
allow_unused/materialize_grads conflict, and the in-place error's hint under anomaly mode."""
import pytest

import torchish

torch = pytest.importorskip("torch")


def _returning(T, make_grad):
    class F(T.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return make_grad(T, g), g
    return F


def _run(T, make_grad):
    x = T.ones(2, 3, requires_grad=True)
    y = T.ones(2, 3, requires_grad=True)
    try:
        _returning(T, make_grad).apply(x, y).sum().backward()
    except RuntimeError as e:
        return str(e)
    return x.grad.tolist(), y.grad.tolist()


@pytest.mark.parametrize("make_grad", [
    lambda T, g: T.ones(4),                       # incompatible
    lambda T, g: T.ones(3, 2),                    # same numel, other shape
    lambda T, g: T.full((5, 2, 3), 2.0),          # broadcast: summed over the new dim
    lambda T, g: T.ones(2, 1),                    # smaller, not expandable from [2, 3]
], ids=["incompatible", "transposed", "broadcast", "smaller"])
def test_custom_function_grad_shape(make_grad):
    assert _run(torchish, make_grad) == _run(torch, make_grad)


def test_custom_function_grad_shape_create_graph():
    def run(T):
        x = T.ones(3, requires_grad=True)
        out = _returning(T, lambda T, g: g.expand(2, 3) * 2).apply(x, T.ones(3))
        (g,) = T.autograd.grad(out.sum(), x, create_graph=True)
        return g.tolist(), g.requires_grad
    assert run(torchish) == run(torch)


def _grad_conflict(T):
    a = T.tensor(2.0, requires_grad=True)
    b = T.tensor(3.0, requires_grad=True)
    out = []
    for kwargs in ({"allow_unused": False, "materialize_grads": True},
                   {"materialize_grads": True}, {"allow_unused": True}):
        try:
            out.append([None if g is None else g.item()
                        for g in T.autograd.grad(a * 2, [a, b], retain_graph=True, **kwargs)])
        except (ValueError, RuntimeError) as e:
            out.append((type(e).__name__, str(e)))
    return out


def test_grad_allow_unused_false_with_materialize_grads():
    assert _grad_conflict(torchish) == _grad_conflict(torch)


def _modified(T, anomaly):
    a = T.tensor([1.0, 2.0], requires_grad=True)
    with T.autograd.set_detect_anomaly(anomaly):
        e = a.exp()
        e.mul_(3)
        try:
            (e * a).sum().backward()
        except RuntimeError as err:
            return str(err)


@pytest.mark.parametrize("anomaly", [False, True])
@pytest.mark.filterwarnings("ignore")
def test_inplace_error_hint_under_anomaly_mode(anomaly):
    assert _modified(torchish, anomaly) == _modified(torch, anomaly)


def _function(T, forward, backward):
    return type("Fn", (T.autograd.Function,), {"forward": staticmethod(forward),
                                               "backward": staticmethod(backward)})


def _save_int(ctx, x, k):
    ctx.save_for_backward(x, 3)
    return x * 2


def _dirty_unreturned(ctx, x, k):
    ctx.mark_dirty(x)
    return x * 2


FUNCTION_CASES = {
    "save a non-tensor": (_save_int, lambda ctx, g: (g, None)),
    "dirty input not returned": (_dirty_unreturned, lambda ctx, g: (g, None)),
    "gradient is a number": (lambda ctx, x, k: x * k, lambda ctx, g: (1.0, None)),
    "gradient for a non-tensor input": (lambda ctx, x, k: x * k, lambda ctx, g: (g, g)),
    "input returned as is": (lambda ctx, x, k: x, lambda ctx, g: (g * 5, None)),
}


@pytest.mark.parametrize("case", list(FUNCTION_CASES))
def test_custom_function_checks(case):
    assert _checked(torchish, case) == _checked(torch, case)


def _checked(T, case):
    x = T.ones(2, requires_grad=True)
    try:
        out = _function(T, *FUNCTION_CASES[case]).apply(x * 1, 2.0)
        facts = [out._base is not None, out.grad_fn.name()]
        out.sum().backward()
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, str(e)
    return facts + [x.grad.tolist()]


def _grad_api(T):
    import collections
    x = T.tensor([1.0, 2.0], requires_grad=True)
    out = []
    for call in (lambda: T.autograd.grad((x ** 2).sum(), {"w": x}),
                 lambda: T.autograd.grad((x ** 2).sum(), collections.OrderedDict(w=x)),
                 lambda: T.autograd.grad([x.sum(), x.sum()], x, [T.tensor(1.0)]),
                 lambda: T.autograd.backward([x.sum(), x.sum()], [T.tensor(1.0)]),
                 lambda: (x ** 2).sum().backward(inputs=[])):
        try:
            result = call()
            out.append({k: v.tolist() for k, v in result.items()})
        except (RuntimeError, TypeError) as e:
            out.append((type(e).__name__, str(e)))
    return out


def test_grad_dict_inputs_and_argument_errors():
    assert _grad_api(torchish) == _grad_api(torch)


def test_grad_only_inputs_false_warns():
    for T in (torchish, torch):
        x = T.ones(2, requires_grad=True)
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            T.autograd.grad(x.sum(), x, only_inputs=False)


def _grad_mode_args(T):
    out = []
    try:
        T.set_grad_enabled("yes")
    except TypeError as e:
        out.append(str(e))
    with T.autograd.set_multithreading_enabled(False):
        x = T.ones(2, requires_grad=True)
        (x * 2).sum().backward()
    return out + [x.grad.tolist(), T.is_grad_enabled()]


def test_grad_mode_arguments():
    assert _grad_mode_args(torchish) == _grad_mode_args(torch)
