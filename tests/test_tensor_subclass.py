"""Tensor subclasses and the `__torch_function__` protocol (`torch.overrides`), compared with
real PyTorch: which `func` an override sees for a small program, the classes of results
under the default `Tensor.__torch_function__`, `as_subclass` / `_make_subclass`, tensor-likes,
TorchFunctionMode and the switches in `torch._C`. Each program runs on both libraries."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


@pytest.fixture(params=["torch", "torchish"])
def lib(request):
    return torch if request.param == "torch" else torchish


def both(program):
    """The program's record on PyTorch and on torchish, asserted equal."""
    expected, got = program(torch), program(torchish)
    assert got == expected
    return got


def _recording(T):
    log = []

    class Recorded(T.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)
    return Recorded, log


def test_recorded_funcs_of_a_program():
    def program(T):
        F = T.nn.functional
        R, log = _recording(T)
        x = T.arange(6.).reshape(2, 3).as_subclass(R)
        record = []

        def step(label, fn):
            del log[:]
            out = fn()
            record.append((label, type(out).__name__, list(log)))
            return out
        step("arith", lambda: (x * 2 + 1) / 3 - x)
        step("rarith", lambda: 1 - 2 ** x)
        step("reduce", lambda: x.sum(dim=0).mean())
        step("torch.sum", lambda: T.sum(x, 1))
        step("max", lambda: x.max(dim=1))
        step("index", lambda: x[0, 1:] + x[1][:2])
        step("compare", lambda: (x > 1) & (x < 4))
        step("linear", lambda: F.relu(F.linear(x, T.ones(4, 3), T.zeros(4))))
        step("cat", lambda: T.cat([x, T.zeros(1, 3)]))
        step("props", lambda: (x.shape, x.dtype, x.ndim))
        step("tolist", lambda: x.tolist())
        step("len", lambda: len(x))
        w = T.ones(3, requires_grad=True)
        loss = step("loss", lambda: (x * w).sum())
        step("backward", lambda: loss.backward())
        record.append(("grad", type(w.grad).__name__, w.grad.tolist()))
        record.append(("grad_fn", loss.grad_fn.name(),
                       loss.grad_fn.next_functions[0][0].name()))
        y = x.clone()
        step("inplace", lambda: y.add_(1) is y)
        return record
    both(program)


def test_default_classes_of_results():
    def program(T):
        F = T.nn.functional

        class Sub(T.Tensor):
            pass
        x = T.tensor([[1., -2.], [3., 4.]]).as_subclass(Sub)
        outs = {"add": x + 1, "radd": 1 + x, "sum": x.sum(), "cat": T.cat([x, x]),
                "relu": F.relu(x), "softmax": F.softmax(x, -1), "getitem": x[0],
                "shape": x.shape, "tolist": x.tolist(), "item": x[0, 0].item(),
                "split": T.split(x, 1), "max": x.max(0), "where": T.where(x > 0, x, 0.),
                "float": x.double(), "matmul": x @ x, "numel": x.numel()}
        record = {k: type(v).__name__ for k, v in outs.items()}
        record["split[0]"] = type(outs["split"][0]).__name__
        record["max.values"] = type(outs["max"].values).__name__
        record["values"] = outs["add"].tolist(), outs["matmul"].tolist()
        y = x.clone()
        record["inplace"] = (y.mul_(2) is y, (y.__iadd__(1)) is y, type(y).__name__)
        record["repr"] = repr(x)
        return record
    both(program)


def test_func_objects_are_the_public_ones(lib):
    F = lib.nn.functional
    seen = []

    class S(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append((func, types))
            return super().__torch_function__(func, types, args, kwargs)
    x = lib.ones(2).as_subclass(S)
    lib.add(x, 1)
    x.add(1)
    x + 1
    F.relu(x)
    x[0]
    x.add_(1)
    assert [f for f, _ in seen] == [lib.add, lib.Tensor.add, lib.Tensor.add, F.relu,
                                   lib.Tensor.__getitem__, lib.Tensor.add_]
    assert all(t == (S,) for _, t in seen)


def test_as_subclass_aliases_and_stays_in_the_graph():
    def program(T):
        class Sub(T.Tensor):
            pass
        a = T.tensor([1., 2., 3.], requires_grad=True)
        b = a.as_subclass(Sub)
        record = [type(b).__name__, b.is_leaf, b.requires_grad, b.grad_fn.name(),
                  b.grad_fn.next_functions[0][0].name(), b._base is a]
        (b * b).sum().backward()
        record.append(a.grad.tolist())
        c = T.zeros(2)
        d = c.as_subclass(Sub)
        d.add_(1)
        record += [c.tolist(), c._version, d._version, type(c.as_subclass(T.Tensor)).__name__]
        with pytest.raises(TypeError) as e:
            c.as_subclass(int)
        record.append(str(e.value))
        return record
    both(program)


def test_make_subclass():
    def program(T):
        class Sub(T.Tensor):
            pass
        data = T.tensor([1., 2.]) * 1
        p = T.Tensor._make_subclass(Sub, data, True)
        q = T.Tensor._make_subclass(Sub, T.tensor([1., 2.], requires_grad=True) * 2)
        data.add_(1)
        return [type(p).__name__, p.requires_grad, p.is_leaf, p.tolist(), q.requires_grad,
                q.grad_fn is None]
    both(program)


def test_subclass_with_new_and_state():
    def program(T):
        class Unit(T.Tensor):
            @staticmethod
            def __new__(cls, data, unit):
                t = T.Tensor._make_subclass(cls, data)
                t.unit = unit
                return t

            def __init__(self, data, unit):
                pass

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                units = {a.unit for a in args if isinstance(a, Unit)}
                out = super().__torch_function__(func, types, args, kwargs)
                if isinstance(out, Unit):
                    out.unit = "".join(sorted(units))
                return out
        u = Unit(T.tensor([1., 2.]), "s")
        v = u * 3 + u
        return [type(v).__name__, v.unit, v.tolist(), u.sum().unit, type(u.shape).__name__]
    both(program)


def test_parameter_opts_out():
    def program(T):
        F = T.nn.functional
        p = T.nn.Parameter(T.ones(2, 2))
        outs = [p + 1, p.sum(), p[0], F.relu(p), T.cat([p, p]), p.detach(), p.t(), p @ p]
        return [type(o).__name__ for o in outs] + [
            T.nn.Parameter.__torch_function__ is T._C._disabled_torch_function_impl,
            T.overrides.has_torch_function((p,))]
    both(program)


def test_not_implemented_errors():
    def program(T):
        class No(T.Tensor):
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        n = T.ones(2).as_subclass(No)
        record = []
        for fn in (lambda: T.add(n, 1), lambda: n.sum(), lambda: n + 1, lambda: 1 - n,
                   lambda: T.nn.functional.relu(n)):
            with pytest.raises(TypeError) as e:
                fn()
            record.append(str(e.value))
        return record
    both(program)


def test_tensor_like_objects():
    def program(T):
        seen = []

        class Like:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                seen.append((func.__name__, [type(a).__name__ for a in args],
                             [t.__name__ for t in types]))
                return "handled"
        like = Like()
        outs = [T.add(like, 1), T.add(T.ones(1), like), T.nn.functional.relu(like),
                T.cat([like, T.ones(1)]), T.overrides.is_tensor_like(like),
                T.overrides.has_torch_function((like,))]
        return outs, seen
    both(program)


def test_overrides_api(lib):
    ov = lib.overrides

    class Sub(lib.Tensor):
        pass
    x, s = lib.ones(2), lib.ones(2).as_subclass(Sub)
    assert not ov.has_torch_function((x,)) and ov.has_torch_function((x, s))
    assert ov.has_torch_function_unary(s) and not ov.has_torch_function_unary(x)
    assert ov.has_torch_function_variadic(x, s) and not ov.has_torch_function_variadic(x, 1)
    assert ov.is_tensor_like(x) and ov.is_tensor_like(s) and not ov.is_tensor_like(1)
    assert lib.Tensor.grad.__get__ in ov.get_default_nowrap_functions()

    def scaled(t, k=2):
        if ov.has_torch_function_unary(t):
            return ov.handle_torch_function(scaled, (t,), t, k=k)
        return t * k
    assert type(scaled(s)) is Sub and scaled(s).tolist() == [2., 2.]
    assert type(scaled(x)) is lib.Tensor
    with lib._C.DisableTorchFunctionSubclass():
        assert type(s + 1) is lib.Tensor and not ov.has_torch_function((s,))
    with lib._C.DisableTorchFunction():
        assert type(s + 1) is lib.Tensor
    assert type(s + 1) is Sub


def test_torch_function_mode():
    def program(T):
        F = T.nn.functional
        seen = []

        class Log(T.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(func.__name__)
                if func.__name__ == "sub":
                    return "intercepted"
                return func(*args, **(kwargs or {}))
        x = T.tensor([1., -2., 3.])
        with Log():
            y = F.relu(x + 1)
            z = x - 1
            x[0]
            x.shape
            T.cat([x, x]).sum()
            enabled = T._C._is_torch_function_mode_enabled()
            with T._C.DisableTorchFunction():
                x * 2
        after = T._C._is_torch_function_mode_enabled()
        x * 3
        return seen, y.tolist(), z, enabled, after
    both(program)


def test_nested_subclasses_pick_the_most_derived():
    def program(T):
        class A(T.Tensor):
            pass

        class B(A):
            pass
        a, b = T.ones(1).as_subclass(A), T.ones(1).as_subclass(B)
        return [type(a + b).__name__, type(b + a).__name__, type(T.cat([a, b])).__name__]
    both(program)


def test_plain_tensors_under_compile_with_a_subclass_defined():
    class Sub(torchish.Tensor):
        pass

    @torchish.compile
    def f(x, w):
        return torchish.nn.functional.relu(x @ w).sum() + torchish.cat([x, x]).mean()
    x, w = torchish.ones(2, 3), torchish.full((3, 3), 0.5)
    out = f(x, w)
    assert type(out) is torchish.Tensor and out.item() == pytest.approx(10.0)
    assert type((x.as_subclass(Sub) * 2).sum()) is Sub


def test_out_argument_dispatches_once():
    def program(T):
        R, log = _recording(T)
        x = T.ones(2).as_subclass(R)
        o, o2 = T.zeros(2), T.zeros(4)
        r = T.add(x, 1, out=o)
        r2 = T.cat([x, x], out=o2)
        return [list(log), type(r).__name__, o.tolist(), r is o, o2.tolist(), r2 is o2]
    both(program)


def test_nested_modes_and_a_mode_over_a_subclass():
    def program(T):
        seen = []

        def mode(tag, then=None):
            class M(T.overrides.TorchFunctionMode):
                def __torch_function__(self, func, types, args=(), kwargs=None):
                    seen.append(f"{tag}:{func.__name__}")
                    if then is None:
                        return func(*args, **(kwargs or {}))
                    with then():
                        return func(*args, **(kwargs or {}))
            return M
        x = T.ones(2)
        with mode("outer", mode("inner"))():
            x.shape, x + 1, x[0], x.tolist()
        R, log = _recording(T)
        r = T.ones(2).as_subclass(R)
        with mode("pass")():
            outs = [r[0], r.shape, T.nn.functional.relu(r) * 2]
        return seen, log, [type(o).__name__ for o in outs]
    both(program)
