"""torchish.nn.utils.prune against real PyTorch: which entries each method prunes (ties in
L1/Ln ranking, the random methods' draws after manual_seed), the parameters, buffers, hooks
and state_dict keys it leaves, iterative pruning through PruningContainer, global pruning,
remove / is_pruned, gradients through the mask, and the error messages."""
import importlib

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _prune(T):
    return importlib.import_module(f"{T.__name__}.nn.utils.prune")


def _np(t):
    return np.asarray(t.detach().cpu().numpy())


def _linear(T, weight, bias=True):
    lin = T.nn.Linear(weight.shape[1], weight.shape[0], bias=bias)
    with T.no_grad():
        lin.weight.copy_(T.tensor(weight))
        if bias:
            lin.bias.copy_(T.arange(weight.shape[0], dtype=T.float32))
    return lin


def _summary(T, module):
    """What pruning leaves on a module, in comparable form."""
    names = lambda it: [n for n, _ in it]   # noqa: E731
    hooks = [(type(h).__name__, getattr(h, "_tensor_name", None),
              [type(m).__name__ for m in h] if isinstance(h, _prune(T).PruningContainer) else None)
             for h in module._forward_pre_hooks.values()]
    out = {"params": names(module.named_parameters()), "buffers": names(module.named_buffers()),
           "state": list(module.state_dict()), "hooks": hooks,
           "pruned": _prune(T).is_pruned(module)}
    for name, value in module.state_dict().items():
        out["v_" + name] = (_np(value).tolist(), str(value.dtype).split(".")[-1])
    if hasattr(module, "weight"):
        out["weight"] = _np(module.weight).tolist()
        out["weight_is_param"] = isinstance(module.weight, T.nn.Parameter)
    return out


# a weight with many ties in |w|, so that which of equal entries go is tested
TIES = np.array([[1., -1., 2., 0.], [0., 1., -2., 1.], [3., 0., -1., 2.]], np.float32)


def _cases():
    return {
        "l1_frac": lambda T, P, m: P.l1_unstructured(m, "weight", amount=0.5),
        "l1_int": lambda T, P, m: P.l1_unstructured(m, "weight", amount=5),
        "l1_bias": lambda T, P, m: P.l1_unstructured(m, "bias", amount=1),
        "l1_zero": lambda T, P, m: P.l1_unstructured(m, "weight", amount=0.0),
        "l1_scores": lambda T, P, m: P.l1_unstructured(
            m, "weight", amount=4, importance_scores=T.tensor(TIES[::-1].copy())),
        "random_unstructured": lambda T, P, m: (T.manual_seed(3),
                                                P.random_unstructured(m, "weight", 0.4)),
        "random_structured": lambda T, P, m: (T.manual_seed(5),
                                              P.random_structured(m, "weight", 2, dim=1)),
        "random_structured_rows": lambda T, P, m: (T.manual_seed(1),
                                                   P.random_structured(m, "weight", 0.34, 0)),
        "ln_rows": lambda T, P, m: P.ln_structured(m, "weight", amount=1, n=2, dim=0),
        "ln_cols_ties": lambda T, P, m: P.ln_structured(m, "weight", amount=0.5, n=1, dim=-1),
        "ln_inf": lambda T, P, m: P.ln_structured(m, "weight", amount=2, n=float("inf"), dim=1),
        "identity": lambda T, P, m: P.identity(m, "weight"),
        "custom": lambda T, P, m: P.custom_from_mask(
            m, "weight", T.tensor(TIES > 0.5)),
        "iterative": lambda T, P, m: (P.l1_unstructured(m, "weight", 3),
                                      P.ln_structured(m, "weight", 1, n=2, dim=0),
                                      P.l1_unstructured(m, "weight", 0.5)),
        "iterative_random": lambda T, P, m: (
            T.manual_seed(7), P.random_unstructured(m, "weight", 2),
            P.random_structured(m, "weight", 1, dim=1),
            P.custom_from_mask(m, "weight", T.ones(3, 4))),
        "remove": lambda T, P, m: (P.l1_unstructured(m, "weight", 4),
                                   P.l1_unstructured(m, "weight", 2), P.remove(m, "weight")),
    }


@pytest.mark.parametrize("case", sorted(_cases()))
def test_pruning_matches(case):
    got = []
    for T in (torchish, torch):
        T.manual_seed(0)
        m = _linear(T, TIES)
        _cases()[case](T, _prune(T), m)
        x = T.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4))
        got.append((_summary(T, m), _np(m(x)).round(5).tolist(), _np(T.rand(2)).tolist()))
    assert got[0] == got[1]


def test_random_unstructured_stream():
    # larger tensors: the random methods must draw exactly PyTorch's stream
    got = []
    for T in (torchish, torch):
        P = _prune(T)
        T.manual_seed(0)
        m = T.nn.Conv2d(3, 6, 3)
        P.random_unstructured(m, "weight", amount=0.3)
        P.random_structured(m, "weight", amount=2, dim=0)
        P.l1_unstructured(m, "bias", amount=0.5)
        got.append((_np(m.weight_mask).tolist(), _np(m.bias_mask).tolist(),
                    _np(T.randn(3)).tolist()))
    assert got[0] == got[1]


def test_global_unstructured():
    got = []
    for T in (torchish, torch):
        P = _prune(T)
        a = _linear(T, TIES)
        b = _linear(T, TIES[:, :3] * 0.5)
        P.l1_unstructured(a, "weight", 2)
        P.global_unstructured([(a, "weight"), (b, "weight"), (b, "bias")],
                              pruning_method=P.L1Unstructured, amount=9)
        got.append((_summary(T, a), _summary(T, b)))
        T.manual_seed(2)
        P.global_unstructured(((a, "bias"), (b, "bias")), P.RandomUnstructured, amount=0.5,
                              importance_scores={(a, "bias"): T.ones(3)})
        got.append((_summary(T, a), _summary(T, b)))
    assert got[0:2] == got[2:4]


def test_grad_through_mask():
    got = []
    for T in (torchish, torch):
        m = _linear(T, TIES)
        _prune(T).l1_unstructured(m, "weight", 6)
        m(T.ones(2, 4)).sum().backward()
        got.append((m.weight.grad_fn.name(), m.weight_orig.grad.tolist(), m.weight_mask.grad,
                    m.weight_orig.requires_grad, m.weight_mask.requires_grad))
    assert got[0] == got[1]


def test_methods_and_container():
    got = []
    for T in (torchish, torch):
        P = _prune(T)
        t = T.tensor(TIES)
        row = [_np(P.L1Unstructured(0.5).prune(t)).tolist(),
               _np(P.LnStructured(1, 2, dim=0).compute_mask(t, T.ones_like(t))).tolist(),
               _np(P.Identity().prune(t, default_mask=T.ones(3, 4) * 2)).tolist()]
        m = _linear(T, TIES)
        first = P.L1Unstructured.apply(m, "weight", amount=2)
        second = P.RandomStructured.apply(m, "weight", amount=0, dim=0)
        row += [type(first).__name__, type(second).__name__, len(second),
                [type(x).__name__ for x in second], type(second[0]).__name__,
                second._tensor_name]
        P.remove(m, "weight")
        row += [list(m.state_dict()), P.is_pruned(m)]
        got.append(row)
    assert got[0] == got[1]


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value).__name__, str(info.value).replace("torchish.", "torch.")


def test_errors():
    got = []
    for T in (torchish, torch):
        P = _prune(T)
        m = lambda: _linear(T, TIES)   # noqa: E731
        conv = T.nn.Conv1d(2, 2, 1, bias=False)
        row = [_error(lambda: P.l1_unstructured(m(), "weight", amount=1.5)),
               _error(lambda: P.l1_unstructured(m(), "weight", amount=-1)),
               _error(lambda: P.l1_unstructured(m(), "weight", amount=13)),
               _error(lambda: P.random_unstructured(m(), "weight", amount="a")),
               _error(lambda: P.ln_structured(m(), "bias", amount=1, n=2, dim=0)),
               _error(lambda: P.ln_structured(m(), "weight", amount=1, n=2, dim=2)),
               _error(lambda: P.random_structured(m(), "weight", amount=5, dim=0)),
               _error(lambda: P.l1_unstructured(m(), "weight", 1,
                                                importance_scores=T.ones(2))),
               _error(lambda: P.global_unstructured([(conv, "weight")], P.LnStructured,
                                                    amount=1, n=1)),
               _error(lambda: P.global_unstructured(3, P.L1Unstructured, amount=1)),
               _error(lambda: P.global_unstructured([], P.L1Unstructured, importance_scores=3,
                                                    amount=1)),
               _error(lambda: P.PruningContainer(P.L1Unstructured(1), 3)),
               _error(lambda: P.custom_from_mask(m(), "weight", T.ones(2))),
               ]
        # a failed prune leaves the module as it was
        lin = m()
        _error(lambda: P.l1_unstructured(lin, "weight", amount=13))
        row.append(list(lin.state_dict()))
        lin2 = m()
        row.append(_error(lambda: P.remove(lin2, "weight")))
        got.append(row)
    assert got[0] == got[1]


@pytest.mark.parametrize("amount", [1, 37, 0.5, 0.93])
def test_l1_ties_large(amount):
    # many equal |w| among 600 entries: topk's tie order decides which go
    w = np.random.default_rng(0).integers(-3, 4, size=(20, 30)).astype(np.float32)
    got = [_np(_prune(T).L1Unstructured(amount).compute_mask(T.tensor(w), T.ones(20, 30)))
           for T in (torchish, torch)]
    np.testing.assert_array_equal(got[0], got[1])


def test_custom_method_subclass():
    # the tutorial's recipe: a user-defined method through BasePruningMethod.apply
    got = []
    for T in (torchish, torch):
        P = _prune(T)

        class EveryOther(P.BasePruningMethod):
            PRUNING_TYPE = "unstructured"

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask

        m = _linear(T, TIES)
        EveryOther.apply(m, "bias")
        P.l1_unstructured(m, "bias", amount=1)
        got.append((_summary(T, m), [type(h).__name__ for h in m._forward_pre_hooks[
            next(iter(m._forward_pre_hooks))]]))
    assert got[0] == got[1]


def test_pruned_module_compiled():
    # the hook's mask * orig is plain torchish ops, so it also runs traced
    torchish.manual_seed(0)
    m = _linear(torchish, TIES)
    _prune(torchish).l1_unstructured(m, "weight", 5)
    x = torchish.ones(2, 4)
    np.testing.assert_allclose(_np(torchish.compile(m)(x)), _np(m(x)), rtol=1e-6)
