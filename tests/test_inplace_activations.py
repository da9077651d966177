"""In-place activations and the fields their nodes save, against real PyTorch: leaky_relu_
(LeakyReluBackward1, from its result), hardtanh_/relu6 (HardtanhBackward0's min_val/max_val),
`2 ** y` (PowBackward2's fields), and the versions batch norm leaves on its running stats."""
import pytest

import torchish

torch = pytest.importorskip("torch")

_FIELDS = ("self", "result", "negative_slope", "min_val", "max_val", "exponent", "other")


def _node_facts(T, program, dtype="float64"):
    """The node's name, its `_saved_<name>` fields, what saved-tensor hooks pack (the result
    or not), the version of the written tensor and the gradient."""
    x = T.tensor([-2.0, -0.5, 0.0, 0.5, 2.0, 7.0], dtype=getattr(T, dtype), requires_grad=True)
    packed = []
    with T.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        out = program(T, x)
    node = out.grad_fn
    fields = {}
    for name in _FIELDS:
        try:
            v = getattr(node, "_saved_" + name)
        except AttributeError:
            continue
        fields[name] = v.tolist() if hasattr(v, "tolist") else v
    try:
        out.sum().backward()
        grad = x.grad.tolist()
    except RuntimeError as e:
        grad = str(e)
    return node.name(), fields, [p is out for p in packed], out._version, grad


_LEAKY = {
    "leaky_relu_": lambda T, x: T.nn.functional.leaky_relu_(x * 1, 0.2),
    "leaky_relu inplace": lambda T, x: T.nn.functional.leaky_relu(x * 1, 0.2, inplace=True),
    "LeakyReLU inplace": lambda T, x: T.nn.LeakyReLU(0.1, inplace=True)(x * 1),
    "Tensor.leaky_relu_": lambda T, x: T.nn.functional.leaky_relu_(x * 1),
    "zero slope": lambda T, x: T.nn.functional.leaky_relu(x * 1, 0.0, inplace=True),
    # (the forward runs; the backward refuses a negative slope)
    "negative slope": lambda T, x: T.nn.functional.leaky_relu(x * 1, -0.2, inplace=True),
    "leaky_relu": lambda T, x: T.nn.functional.leaky_relu(x * 1, 0.2),
}


@pytest.mark.parametrize("name", sorted(_LEAKY))
def test_leaky_relu_inplace_saves_its_result(name):
    assert _node_facts(torchish, _LEAKY[name]) == _node_facts(torch, _LEAKY[name])


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_leaky_relu_inplace_dtypes(dtype):
    program = _LEAKY["leaky_relu_"]
    assert _node_facts(torchish, program, dtype) == _node_facts(torch, program, dtype)


def _leaky_from_unpacked(T):
    """The in-place backward reads what the unpack hook returns (the sign of the result)."""
    x = T.tensor([-1.0, 0.5, -0.25, 2.0], dtype=T.float64, requires_grad=True)
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: -t):
        out = T.nn.functional.leaky_relu_(x * 1, 0.2)
    out.sum().backward()
    return x.grad.tolist()


def test_leaky_relu_inplace_backward_reads_the_unpacked_result():
    assert _leaky_from_unpacked(torchish) == _leaky_from_unpacked(torch)


def _leaky_on_a_view(T, slope):
    x = T.tensor([-1.0, 0.0, -0.25, 2.0], dtype=T.float64, requires_grad=True)
    base = x * 1
    T.nn.functional.leaky_relu_(base[1:], slope)
    try:
        base.sum().backward()
    except RuntimeError as e:
        return str(e)
    return base.grad_fn.name(), x.grad.tolist()


@pytest.mark.parametrize("slope", [0.3, -0.3])
def test_leaky_relu_inplace_on_a_view(slope):
    assert _leaky_on_a_view(torchish, slope) == _leaky_on_a_view(torch, slope)


def _leaky_twice(T):
    x = T.tensor([-1.0, 0.5, 2.0], dtype=T.float64, requires_grad=True)
    g, = T.autograd.grad(T.nn.functional.leaky_relu_(x * x, 0.2).sum(), x, create_graph=True)
    g.sum().backward()
    return g.tolist(), x.grad.tolist()


def test_leaky_relu_inplace_double_backward():
    assert _leaky_twice(torchish) == _leaky_twice(torch)


_HARDTANH = {
    "relu6": lambda T, x: T.nn.functional.relu6(x * 1),
    "ReLU6": lambda T, x: T.nn.ReLU6()(x * 1),
    "hardtanh": lambda T, x: T.nn.functional.hardtanh(x * 1, -1.0, 1.5),
    "Hardtanh": lambda T, x: T.nn.Hardtanh(-0.5, 0.5)(x * 1),
}


def _hardtanh_fields(T, program):
    node = program(T, T.tensor([-2.0, 0.5, 7.0], requires_grad=True)).grad_fn
    return node.name(), node._saved_min_val, node._saved_max_val


@pytest.mark.parametrize("name", sorted(_HARDTANH))
def test_hardtanh_saved_bounds(name):
    """relu6 is hardtanh(input, 0, 6): its node reads back ints, ReLU6's the floats 0.0, 6.0."""
    ours, theirs = _hardtanh_fields(torchish, _HARDTANH[name]), \
        _hardtanh_fields(torch, _HARDTANH[name])
    assert ours == theirs and list(map(type, ours)) == list(map(type, theirs))


def _hardtanh_inplace(T, program):
    x = T.tensor([-2.0, -0.5, 0.0, 0.5, 2.0, 7.0], requires_grad=True)
    out = program(T, x * 1)
    node = out.grad_fn
    out.sum().backward()
    return node.name(), node._saved_min_val, node._saved_max_val, out._version, x.grad.tolist()


@pytest.mark.parametrize("program", [
    lambda T, y: T.nn.functional.relu6(y, inplace=True),
    lambda T, y: T.nn.ReLU6(inplace=True)(y),
    lambda T, y: T.nn.functional.hardtanh_(y, -1.0, 1.5),
    lambda T, y: T.nn.Hardtanh(-0.5, 0.5, inplace=True)(y)])
def test_hardtanh_inplace(program):
    assert _hardtanh_inplace(torchish, program) == _hardtanh_inplace(torch, program)


def _rpow_fields(T, base):
    y = T.tensor([0.5, 1.0], dtype=T.float64, requires_grad=True)
    node = (base(T) ** y).grad_fn
    fields = {}
    for name in _FIELDS + ("input",):
        try:
            v = getattr(node, "_saved_" + name)
        except AttributeError:
            continue
        fields[name] = v.tolist() if hasattr(v, "tolist") else v
    return node.name(), fields


@pytest.mark.parametrize("base", [lambda T: 2, lambda T: 2.5,
                                  lambda T: T.tensor([3.0, 1.5], dtype=T.float64)])
def test_rpow_saved_fields(base):
    """PowBackward2 (number ** tensor) saves self (the number), exponent and result."""
    assert _rpow_fields(torchish, base) == _rpow_fields(torch, base)


def _batch_norm_versions(T):
    T.manual_seed(0)
    bn = T.nn.BatchNorm1d(3)
    x = T.arange(12.0).reshape(4, 3)

    def versions():
        return tuple(t._version for t in (bn.running_mean, bn.running_var,
                                          bn.num_batches_tracked, bn.weight))
    seen = [versions()]
    bn(x)
    seen.append(versions())
    with T.no_grad():
        bn(x)
    seen.append(versions())
    bn.eval()
    bn(x)
    seen.append(versions())
    bn.train()
    bn.load_state_dict({k: v.clone() for k, v in bn.state_dict().items()})
    seen.append(versions())
    T.nn.functional.batch_norm(x, bn.running_mean, bn.running_var, training=True)
    seen.append(versions())
    return seen


def test_batch_norm_running_stats_versions():
    """PyTorch's batch norm kernel updates the running statistics without bumping their
    version (num_batches_tracked's add_ does)."""
    assert _batch_norm_versions(torchish) == _batch_norm_versions(torch)



def _saved_self_of_inplace(T, program, hooks):
    """An in-place node's `_saved_self` is the clone PyTorch saved before the write: the old
    values, its CloneBackward0 leading to the old history (a hook's unpack gives it)."""
    x = T.tensor([-2.0, 0.5, 3.0], dtype=T.float64, requires_grad=True)
    w = T.tensor([3.0, 4.0, 5.0], dtype=T.float64, requires_grad=True)
    if hooks:
        with T.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t + 100):
            out = program(T, x * 2, w)
    else:
        out = program(T, x * 2, w)
    saved = out.grad_fn._saved_self
    history = None if saved.grad_fn is None else (saved.grad_fn.name(), [
        (f.name() if f else None, n) for f, n in saved.grad_fn.next_functions])
    return out.grad_fn.name(), saved.tolist(), saved.requires_grad, history, out._version


@pytest.mark.parametrize("hooks", [False, True])
@pytest.mark.parametrize("program", [
    lambda T, y, w: T.nn.functional.hardtanh_(y),
    lambda T, y, w: T.nn.functional.relu6(y, inplace=True),
    lambda T, y, w: T.nn.functional.threshold_(y, 0.1, 2.0),
    lambda T, y, w: y.mul_(w),
    lambda T, y, w: T.zeros(3, dtype=T.float64).mul_(w)])
def test_inplace_saved_self_is_the_old_value(program, hooks):
    assert _saved_self_of_inplace(torchish, program, hooks) == \
        _saved_self_of_inplace(torch, program, hooks)


def _nested_regions(T):
    """disable_saved_tensors_hooks refuses to be entered inside a hooks region, and a hooks
    region inside it (PyTorch raises the error message either way)."""
    graph, f, seen = T.autograd.graph, (lambda t: t), []
    for outer, inner in ((lambda: graph.saved_tensors_hooks(f, f),
                          lambda: graph.disable_saved_tensors_hooks("inner")),
                         (lambda: graph.disable_saved_tensors_hooks("outer"),
                          lambda: graph.saved_tensors_hooks(f, f))):
        try:
            with outer():
                with inner():
                    seen.append("entered")
        except RuntimeError as e:
            seen.append(str(e))
    return seen


def test_disable_saved_tensors_hooks_inside_a_hooks_region():
    assert _nested_regions(torchish) == _nested_regions(torch)
