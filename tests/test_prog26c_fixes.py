"""Regression tests for what the sweep26c ported programs exposed, against real PyTorch:
loading an optimizer state saved by another kind of optimizer (SGD's momentum_buffer only)
into one that keeps a `step` fails as PyTorch's does, with KeyError naming the missing entry
(sweep26c_knowledge_tracing.py catches it to start its fine-tuning optimizer afresh)."""
import pytest

import torchish

torch = pytest.importorskip("torch")

# every optimizer whose __setstate__ converts a saved `step` (and ASGD's eta/mu) to a tensor
_KEEPS_STEP = ["Adam", "AdamW", "Adagrad", "ASGD", "Adamax", "Adafactor", "RMSprop", "NAdam",
               "RAdam", "Rprop", "Adadelta"]


def _load_sgd_state(T, name):
    T.manual_seed(0)
    m = T.nn.Linear(3, 2)
    sgd = T.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    m(T.ones(1, 3)).sum().backward()
    sgd.step()
    opt = getattr(T.optim, name)(m.parameters(), lr=0.01)
    try:
        opt.load_state_dict(sgd.state_dict())
    except Exception as e:  # the outcome itself is compared
        return type(e).__name__, str(e)
    return "ok", sorted(opt.state[m.weight])


@pytest.mark.parametrize("name", _KEEPS_STEP + ["SGD", "SparseAdam"])
def test_load_foreign_state_matches(name):
    assert _load_sgd_state(torchish, name) == _load_sgd_state(torch, name)


def _load_partial_asgd(T):
    m = T.nn.Linear(3, 2)
    opt = T.optim.ASGD(m.parameters())
    groups = opt.state_dict()["param_groups"]
    try:
        opt.load_state_dict({"state": {0: {"step": 3}, 1: {"step": 3}},
                             "param_groups": groups})
    except KeyError as e:
        return str(e)
    return "ok"


def test_asgd_state_without_eta():
    assert _load_partial_asgd(torchish) == _load_partial_asgd(torch) == "'eta'"


def _resume_same_kind(T):
    # the ordinary resume (same optimizer, Python-number step from an old checkpoint) still works
    T.manual_seed(0)
    m = T.nn.Linear(3, 2)
    opt = T.optim.Adam(m.parameters(), lr=0.1)
    m(T.ones(1, 3)).sum().backward()
    opt.step()
    sd = opt.state_dict()
    for s in sd["state"].values():
        s["step"] = 1
    opt2 = T.optim.Adam(m.parameters(), lr=0.1)
    opt2.load_state_dict(sd)
    st = opt2.state[m.weight]["step"]
    return type(st).__name__, str(st.dtype), float(st)


def test_resume_python_step_still_converts():
    assert _resume_same_kind(torchish) == _resume_same_kind(torch)


# ---- the legacy Variable (sweep26c_knowledge_tracing.py wraps its inputs in one) ----------
def _variable_story(T):
    from importlib import import_module
    Variable = import_module(T.__name__ + ".autograd").Variable
    out = []
    x = T.ones(3)
    v = Variable(x, requires_grad=True)
    out.append((v.requires_grad, v.is_leaf, v.grad_fn is None, v.data_ptr() == x.data_ptr(),
                v is x, type(v).__name__, Variable.__name__))
    x.add_(1)                                   # an alias: sees the in-place update
    (v * 2).sum().backward()
    out.append((v.tolist(), v.grad.tolist()))
    h = v * 3
    out.append((Variable(h).requires_grad, Variable(h).grad_fn is None,
                isinstance(h, Variable), isinstance(1.0, Variable)))
    p = Variable(T.nn.Parameter(T.ones(1)))
    out.append((type(p).__name__, Variable().tolist(), Variable(T.ones(2), True).requires_grad))
    for bad in (lambda: Variable([1.0]),
                lambda: Variable(T.ones(2, dtype=T.long), requires_grad=True),
                lambda: import_module(T.__name__ + ".autograd").variable(T.ones(1))):
        try:
            bad()
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


def test_variable_matches():
    assert _variable_story(torchish) == _variable_story(torch)


def _volatile_warnings(T):
    import warnings
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        T.autograd.Variable(T.ones(1), volatile=True)
    return [(w.category.__name__, str(w.message)) for w in seen]


def test_variable_volatile_warns():
    assert _volatile_warnings(torchish) == _volatile_warnings(torch)


def test_autograd_star_import_names():
    ours, theirs = {}, {}
    exec("from torchish.autograd import *", ours)
    exec("from torch.autograd import *", theirs)
    ours = {k for k in ours if not k.startswith("__")}
    theirs = {k for k in theirs if not k.startswith("__")}
    # NestedIOFunction and enforce_grad_layout_policy are not provided by torchish
    assert ours == theirs - {"NestedIOFunction", "enforce_grad_layout_policy"}


def test_distributions_star_import_names():
    # the submodules (constraints, transforms) are attributes, not star-import names
    ours, theirs = {}, {}
    exec("from torchish.distributions import *", ours)
    exec("from torch.distributions import *", theirs)
    assert set(ours) - {"__builtins__"} == set(theirs) - {"__builtins__"}


def _legacy_add(T):
    p, g = T.ones(2), T.full((2,), 2.0)
    p.add_(-0.1, g)                 # pre-1.5 optimizer code: add_(alpha, other)
    p.addcdiv_(-0.1, g, g)          # ... addcdiv_(value, tensor1, tensor2)
    return p.tolist()


def test_deprecated_scalar_first_overloads():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _legacy_add(torchish) == _legacy_add(torch)
