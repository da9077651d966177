"""torch.library custom operators against real PyTorch (sweep 28): schema text as `op._schema`
prints it, infer_schema's refusals, the dispatcher's argument checks and conversions, autograd
through Tensor[] arguments and results, the checks on a kernel's results and a backward's
gradients, mutation (version counters, mutates_args="unknown"), register_fake, and tracing."""
import re
import typing
import uuid
from typing import Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _ns():
    return "t28_" + uuid.uuid4().hex[:8]   # definitions are process-global: a fresh namespace


def _text(err, ns):
    """An exception as compared: type and message, the namespace and module names neutral."""
    msg = str(err).replace(ns, "NS")
    msg = re.sub(r"\(with implementation in <module [^>]*>\)", "(MODULE)", msg)
    msg = msg.replace("torchish._tensor.Tensor", "torch.Tensor")
    return type(err).__name__, msg


def _outcome(fn, ns):
    try:
        return ("ok", fn())
    except Exception as err:   # (the comparison is the point: any exception type)
        return _text(err, ns)


def _both(program):
    """program(T, ns) for torchish and torch under the same namespace name."""
    ns = _ns()
    return [program(T, ns) for T in (torchish, torch)]


# --- 1. schema text ---------------------------------------------------------------------

def _hinted(T, case):
    """Functions whose hints exercise the schema inference (`T` is torchish or torch)."""
    Tensor = T.Tensor
    Number = T.types.Number
    if case == "floats":
        def f(x: Tensor, a: float = 1.0, b: float = 0.5, c: float = 1e-6, d: float = -2.0,
              e: float = 1e20, h: float = 3.14159265358979, s: float = 1e-5, t: float = 0.1,
              u: float = 1e16, w: float = 1.5e-10, z: float = 0.0, q: float = 1 / 3,
              r: float = 2e19, i: float = 2) -> Tensor: ...
    elif case == "optionals":
        def f(x: Optional[Tensor], y: Optional[Tensor] = None, z: Tensor | None = None,
              n: Optional[int] = None, s: Optional[str] = None, q: Optional[float] = None,
              b: Optional[bool] = None, o: Optional[list[int]] = None,
              p: Optional[Sequence[float]] = None) -> Tensor: ...
    elif case == "sequences":
        def f(x: Tensor, a: Sequence[int], b: list[int], c: list[Tensor],
              d: Sequence[Tensor], e: list[float], g: list[bool],
              h: list[Optional[Tensor]], k: typing.List[Number]) -> list[Tensor]: ...
    elif case == "scalars":
        def f(x: Tensor, m: Number, n: typing.Union[int, float, bool, None] = None,
              k: int = -3, flag: bool = False, mode: str = "mean") -> tuple[Tensor, int]: ...
    elif case == "keyword_only":
        def f(x: Tensor, *, k: int = 2, dt: T.dtype = T.float32,
              dev: T.device = T.device("cpu"), dt2: Optional[T.dtype] = None) -> Tensor: ...
    elif case == "returns":
        def f(x: Tensor) -> tuple[Tensor, int, float, bool]: ...
    elif case == "one_tuple":
        def f(x: Tensor) -> tuple[Tensor]: ...
    elif case == "none":
        def f(x: Tensor, y: list[Tensor], z: Optional[Tensor], n: int) -> None: ...
    return f


SCHEMA_CASES = [("floats", ()), ("optionals", ()), ("sequences", ()), ("scalars", ()),
                ("keyword_only", ()), ("returns", ()), ("one_tuple", ()),
                ("none", ("y", "z")), ("none", "unknown"), ("none", ["x"])]


@pytest.mark.parametrize("case,mutates", SCHEMA_CASES)
def test_schema_text_matches(case, mutates):
    def program(T, ns):
        f = _hinted(T, case)
        inferred = T.library.infer_schema(f, mutates_args=mutates)
        T.library.custom_op(f"{ns}::f", f, mutates_args=mutates)
        return inferred, str(getattr(T.ops, ns).f.default._schema).replace(ns, "NS")
    ours, theirs = _both(program)
    assert ours == theirs


def test_library_define_prints_defaults_as_pytorch():
    def program(T, ns):
        lib = T.library.Library(ns, "DEF")
        lib.define("f(Tensor x, float a=1, float b=0.1, SymInt c=3, bool d=True, "
                   "ScalarType? e=None,str s=\"hi\") -> Tensor")
        out = str(getattr(T.ops, ns).f.default._schema).replace(ns, "NS")
        del lib
        return out
    ours, theirs = _both(program)
    assert ours == theirs


def _sig_free(outcome):
    # (the signature and the table of valid types print class names: torchish's differ)
    kind, msg = outcome
    return kind, re.split(r"The valid types are| Got func with signature", msg)[0]


INFER_ERRORS = {
    "int_or_float": "def f(x: T.Tensor, s: int | float) -> T.Tensor: ...",
    "any": "def f(x: T.Tensor, s: typing.Any) -> T.Tensor: ...",
    "tuple_param": "def f(x: T.Tensor, s: tuple[int, int]) -> T.Tensor: ...",
    "list_default": "def f(x: T.Tensor, s: list[int] = [1, 2]) -> T.Tensor: ...",
    "tuple_default": "def f(x: T.Tensor, s: list[int] = (1, 2)) -> T.Tensor: ...",
    "optional_return": "def f(x: T.Tensor) -> Optional[T.Tensor]: ...",
    "int_list_return": "def f(x: T.Tensor) -> list[int]: ...",
    "varargs": "def f(x: T.Tensor, *args: T.Tensor) -> T.Tensor: ...",
    "varkwargs": "def f(x: T.Tensor, **kw: T.Tensor) -> T.Tensor: ...",
    "positional_only": "def f(x: T.Tensor, /) -> T.Tensor: ...",
    "no_hint": "def f(x: T.Tensor, s) -> T.Tensor: ...",
    "no_return": "def f(x: T.Tensor): ...",
}


@pytest.mark.parametrize("case", list(INFER_ERRORS))
def test_infer_schema_refusals(case):
    def program(T, ns):
        scope = {"T": T, "typing": typing, "Optional": Optional}
        exec(INFER_ERRORS[case], scope)
        return _sig_free(_outcome(lambda: T.library.custom_op(f"{ns}::f", scope["f"],
                                                              mutates_args=()), ns))
    ours, theirs = _both(program)
    assert ours == theirs and ours[0] == "ValueError"


MUTATION_ERRORS = {
    "unseen": ("def f(x: T.Tensor) -> None: ...", ("z",), None),
    "not_tensor": ("def f(x: T.Tensor, n: int) -> None: ...", ("n",), None),
    "bad_string": ("def f(x: T.Tensor) -> None: ...", "x", None),
    "schema_mismatch": ("def f(x: T.Tensor) -> None: ...", (), "(Tensor(a0!) x) -> ()"),
    "kwarg_only_tensor": ("def f(x: T.Tensor, *, y: T.Tensor) -> T.Tensor: ...", (), None),
}


@pytest.mark.parametrize("case", list(MUTATION_ERRORS))
def test_custom_op_declaration_refusals(case):
    source, mutates, schema = MUTATION_ERRORS[case]

    def program(T, ns):
        scope = {"T": T}
        exec(source, scope)
        return _sig_free(_outcome(lambda: T.library.custom_op(
            f"{ns}::f", scope["f"], mutates_args=mutates, schema=schema), ns))
    ours, theirs = _both(program)
    assert ours == theirs and ours[0] != "ok"


# --- 2. argument checks and conversions ------------------------------------------------------

def _probe_op(T, ns, hint):
    """An op of one argument whose kernel reports what it received."""
    seen = []

    def k(v: hint) -> T.Tensor:
        seen.append(("T", tuple(v.shape)) if isinstance(v, T.Tensor) else
                    [("T", tuple(e.shape)) if isinstance(e, T.Tensor) else e for e in v]
                    if isinstance(v, list) else (type(v).__name__, repr(v)))
        return T.zeros(1)
    name = "p" + uuid.uuid4().hex[:6]
    op = T.library.custom_op(f"{ns}::{name}", k, mutates_args=())
    return op, seen


ARG_CASES = [
    ("Tensor", ["s", 1, 1.5, "list", None, True, "ndarray"]),
    ("int", [1.5, "s", "vector", "scalar_float", "one", True, None, np.int32(3),
             np.float64(2.0), 2 ** 70]),
    ("float", [1, "s", "vector", "scalar_int", True, None, 1 + 2j, np.float32(1.5)]),
    ("bool", [2, "s", "vector", 1.5, None]),
    ("str", [1, None, b"x"]),
    ("Optional[Tensor]", [1, "s", "list", None, True]),
    ("list[int]", [1, (1, 2), [1.5], "s", "vector", None, "list", [True], []]),
    ("list[float]", [1.0, [1], (1, 2), "s", "list", None, [True]]),
    ("list[Tensor]", ["tuple", "list_with_none", [], "vector", None, [1]]),
    ("list[Optional[Tensor]]", [[None], "list_with_none", [1], (None,)]),
    ("Number", [1 + 2j, None, np.float32(2.0), [1], "scalar_float", "s", True]),
    ("list[Number]", [[1, 2.5], 1, "list"]),
    ("dtype", ["float32", 6, None, 1.5, "dtype"]),
    ("device", ["cpu", 0, 1.5, None]),
    ("Optional[int]", [None, 1.5, 2]),
    ("Optional[list[int]]", [None, 2, [1]]),
]


def _value(T, spec):
    # values naming tensors are built per library
    return {"vector": lambda: T.ones(2), "scalar_float": lambda: T.tensor(2.5),
            "scalar_int": lambda: T.tensor(2), "one": lambda: T.tensor([3]),
            "list": lambda: [T.ones(2)], "tuple": lambda: (T.ones(2), T.ones(2)),
            "list_with_none": lambda: [T.ones(2), None],
            "ndarray": lambda: np.ones(2),
            "dtype": lambda: T.float64}.get(spec, lambda: spec)() \
        if isinstance(spec, str) else spec


@pytest.mark.parametrize("hint,values", ARG_CASES, ids=[c[0] for c in ARG_CASES])
def test_argument_checks_and_conversions(hint, values):
    def program(T, ns):
        scope = {"T": T, "Optional": Optional, "Number": T.types.Number,
                 "Tensor": T.Tensor, "dtype": T.dtype, "device": T.device}
        op, seen = _probe_op(T, ns, eval(hint, scope))
        out = []
        for spec in values:
            outcome = _outcome(lambda: op(_value(T, spec)), ns)
            out.append((outcome[0], re.sub(r"p[0-9a-f]{6}", "OP", outcome[1]))
                       if outcome[0] != "ok" else ("ok", seen[-1]))
        return out
    ours, theirs = _both(program)
    for spec, a, b in zip(values, ours, theirs):
        assert a == b, spec


def test_call_binding_errors():
    def program(T, ns):
        Tensor = T.Tensor

        @T.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: Tensor, o: Optional[Tensor], n: int, s: float = 1.0, *,
              k: int = 2) -> Tensor:
            return x * n
        x = T.ones(2)
        calls = [lambda: f(x, None), lambda: f(x), lambda: f(x, None, 1, 2.0, 3),
                 lambda: f(x, None, 1, zz=2), lambda: f(x, None, n=1.5),
                 lambda: getattr(T.ops, ns).f(x, None, "a"),
                 lambda: getattr(T.ops, ns).f.default(x, None, 2, k=1.5),
                 lambda: f(x, None, 2, k=3).tolist()]
        return [_outcome(c, ns) for c in calls]
    ours, theirs = _both(program)
    assert ours == theirs


def test_defaults_reach_the_kernel_converted():
    def program(T, ns):
        seen = []

        @T.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: T.Tensor, s: float = 2, *, d: T.dtype = T.float64,
              dev: T.device = T.device("cpu")) -> T.Tensor:
            seen.append((repr(s), repr(d), repr(dev)))
            return (x * s).to(d)
        y = f(T.ones(2, dtype=T.int64))
        z = f(T.ones(2, dtype=T.int64), 3, d=7)
        return seen, y.dtype is T.float64, z.tolist()
    ours, theirs = _both(program)
    assert ours == theirs


# --- 3. autograd through Tensor[] -----------------------------------------------------------

def _wsum(T, ns):
    Tensor = T.Tensor

    @T.library.custom_op(f"{ns}::wsum", mutates_args=())
    def wsum(xs: list[Tensor], w: Tensor) -> Tensor:
        out = xs[0] * w
        for x in xs[1:]:
            out = out + x * w
        return out

    def setup(ctx, inputs, output):
        xs, w = inputs
        ctx.save_for_backward(w, *xs)
        ctx.n = len(xs)
    return wsum, setup


def _grads(ts):
    return [None if t.grad is None else t.grad.tolist() for t in ts]


def test_tensor_list_input_gets_gradients():
    def program(T, ns):
        wsum, setup = _wsum(T, ns)
        needs = []

        def backward(ctx, g):
            needs.append(ctx.needs_input_grad)
            w, *xs = ctx.saved_tensors
            return [g * w * (i + 1) for i in range(ctx.n)], sum(xs) * g
        a = T.tensor([1., 2.], requires_grad=True)
        b = T.tensor([3., 4.], requires_grad=True)
        w = T.tensor([.5, 2.], requires_grad=True)
        y = wsum([a, b], w)
        missing = _outcome(lambda: y.sum().backward(), ns)
        wsum.register_autograd(backward, setup_context=setup)
        y = wsum((a, b), w)
        edges = [n and n.name() for n, _ in y.grad_fn.next_functions]
        (y * T.tensor([1., -1.])).sum().backward()
        full = _grads([a, b, w])
        a.grad = b.grad = w.grad = None
        y = wsum([T.ones(2), b], w.detach())
        partial = [n and n.name() for n, _ in y.grad_fn.next_functions]
        y.sum().backward()
        return (missing, y.grad_fn.name().replace(ns, "NS"), edges, full, partial,
                _grads([a, b, w]), needs)
    ours, theirs = _both(program)
    assert ours == theirs


BAD_BACKWARDS = {
    "short_list": lambda T: lambda ctx, g: ([g], None),
    "not_a_list": lambda T: lambda ctx, g: (g, None),
    "too_many": lambda T: lambda ctx, g: ([g, g], g, g),
    "too_few": lambda T: lambda ctx, g: [g, g],
    "bad_shape": lambda T: lambda ctx, g: ([g, g], T.ones(3)),
    "not_a_tensor": lambda T: lambda ctx, g: ([g, g], 3),
    "none_for_list": lambda T: lambda ctx, g: (None, g),
    "nones_in_list": lambda T: lambda ctx, g: ([None, g], None),
}


@pytest.mark.parametrize("case", list(BAD_BACKWARDS))
def test_tensor_list_backward_structure(case):
    def program(T, ns):
        wsum, setup = _wsum(T, ns)
        wsum.register_autograd(BAD_BACKWARDS[case](T), setup_context=setup)
        a = T.ones(2, requires_grad=True)
        b = T.ones(2, requires_grad=True)
        w = T.ones(2, requires_grad=True)
        out = _outcome(lambda: wsum([a, b], w).sum().backward(), ns)
        return out, _grads([a, b, w])
    ours, theirs = _both(program)
    assert ours == theirs


def test_tensor_list_output_gradients():
    def program(T, ns):
        @T.library.custom_op(f"{ns}::parts", mutates_args=())
        def parts(x: T.Tensor) -> list[T.Tensor]:
            return [x * 2, x * 3]
        seen = []

        def backward(ctx, grads):
            seen.append((type(grads).__name__, [g.tolist() for g in grads]))
            return grads[0] * 2 + grads[1] * 3
        parts.register_autograd(backward)
        x = T.ones(2, requires_grad=True)
        r = parts(x)
        r[0].sum().backward()
        return type(r).__name__, r[1].grad_fn.name().replace(ns, "NS"), x.grad.tolist(), seen
    ours, theirs = _both(program)
    assert ours == theirs


# --- 4. results that alias inputs, gradient counts --------------------------------------

ALIASING = {
    "identity": ("x", "-> Tensor"),
    "view": ("x.view(-1)", "-> Tensor"),
    "same_twice": ("(y, y)", "-> tuple"),
    "list_with_input": ("[x + 1, x]", "-> list"),
}


@pytest.mark.parametrize("case", list(ALIASING))
@pytest.mark.parametrize("grad", [False, True])
def test_results_aliasing_inputs_are_refused(case, grad):
    body, kind = ALIASING[case]

    def program(T, ns):
        ret = {"-> Tensor": T.Tensor, "-> tuple": tuple[T.Tensor, T.Tensor],
               "-> list": list[T.Tensor]}[kind]

        def f(x: T.Tensor) -> ret:
            return eval(body, {}, {"x": x, "y": x + 1})
        op = T.library.custom_op(f"{ns}::{case}", f, mutates_args=())
        return _outcome(lambda: op(T.ones(2, requires_grad=grad)), ns)
    ours, theirs = _both(program)
    assert ours == theirs and ours[0] == "RuntimeError"


GRADIENT_COUNTS = {
    "one": lambda g: g, "two": lambda g: (g, g), "two_none": lambda g: (g, None),
    "three": lambda g: (g, g, None), "four_nones": lambda g: (g, None, None, None),
    "four": lambda g: (g, None, None, g), "as_list": lambda g: [g, None, None],
    "grad_for_float": lambda g: (g, None, g),
}


@pytest.mark.parametrize("case", list(GRADIENT_COUNTS))
def test_backward_gradient_count(case):
    def program(T, ns):
        @T.library.custom_op(f"{ns}::sc", mutates_args=())
        def sc(x: T.Tensor, y: T.Tensor, s: float) -> T.Tensor:
            return x * y * s
        rule = GRADIENT_COUNTS[case]
        sc.register_autograd(lambda ctx, g: rule(g))
        x = T.ones(2, requires_grad=True)
        return _outcome(lambda: sc(x, T.ones(2), 2.0).sum().backward(), ns), _grads([x])
    ours, theirs = _both(program)
    assert ours == theirs


def test_setup_context_inputs_keyword_only_and_defaults():
    def program(T, ns):
        seen = []

        @T.library.custom_op(f"{ns}::kw", mutates_args=())
        def kw(x: T.Tensor, s: float = 2.0, *, p: int = 1) -> T.Tensor:
            return x * s ** p

        def setup(ctx, inputs, keyword_only_inputs, output):
            seen.append((len(inputs), inputs[1:], keyword_only_inputs))
            ctx.k = inputs[1] ** keyword_only_inputs["p"]
        kw.register_autograd(lambda ctx, g: (g * ctx.k, None), setup_context=setup)
        x = T.ones(2, requires_grad=True)
        kw(x, p=2).sum().backward()
        return seen, x.grad.tolist()
    ours, theirs = _both(program)
    assert ours == theirs


# --- 5. mutation, register_fake -------------------------------------------------------------

def test_mutated_arguments_bump_versions():
    def program(T, ns):
        Tensor = T.Tensor

        @T.library.custom_op(f"{ns}::inc", mutates_args=("x",))
        def inc(x: Tensor, n: float) -> None:
            x.add_(n)

        @T.library.custom_op(f"{ns}::noop", mutates_args=("x",))
        def noop(x: Tensor) -> None:
            pass

        @T.library.custom_op(f"{ns}::unk", mutates_args="unknown")
        def unk(x: Tensor, y: Tensor, n: int) -> Tensor:
            x.add_(n)
            return y + 1

        @T.library.custom_op(f"{ns}::many", mutates_args=["xs"])
        def many(xs: list[Tensor]) -> None:
            for x in xs:
                x.add_(1)
        out = []
        t = T.zeros(3)
        v = t._version
        out.append((inc(t, 2.0), t.tolist(), t._version - v))
        base = T.zeros(4)
        view = base[1:3]
        v = base._version
        inc(view, 1.0)
        out.append((base.tolist(), base._version - v, view._version - v))
        t = T.zeros(3)
        v = t._version
        noop(t)
        out.append(t._version - v)
        t, u = T.zeros(2), T.ones(2)
        v, w = t._version, u._version
        out.append((unk(t, u, 3).tolist(), t.tolist(), t._version - v, u._version - w))
        a, b = T.zeros(1), T.zeros(1)
        v = a._version
        many([a, b])
        out.append((a.tolist(), b.tolist(), a._version - v, b._version - v))
        out.append(_outcome(lambda: inc.register_autograd(lambda ctx, g: None), ns))
        out.append(_outcome(lambda: noop.register_autograd(lambda ctx, g: None), ns))
        return out
    ours, theirs = _both(program)
    assert ours == theirs


def test_register_fake_is_accepted():
    def program(T, ns):
        @T.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: T.Tensor) -> T.Tensor:
            return x * 2

        def fake(x):
            return T.empty_like(x)
        returned = [f.register_fake(fake) is fake,
                    T.library.register_fake(f"{ns}::f", fake) is fake,
                    T.library.register_fake(getattr(T.ops, ns).f.default)(fake) is fake]
        missing = _outcome(lambda: T.library.register_fake(f"{ns}::nope", fake), ns)
        return returned, f(T.ones(2)).tolist(), missing
    ours, theirs = _both(program)
    assert ours == theirs


def test_register_autograd_by_name():
    def program(T, ns):
        @T.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: T.Tensor) -> T.Tensor:
            return x * 2
        T.library.register_autograd(f"{ns}::f", lambda ctx, g: g * 2)
        x = T.ones(2, requires_grad=True)
        f(x).sum().backward()
        missing = _outcome(lambda: T.library.register_autograd(f"{ns}::nope", lambda c, g: g),
                           ns)
        return x.grad.tolist(), missing
    ours, theirs = _both(program)
    assert ours == theirs


# --- 6. tracing -----------------------------------------------------------------------------

def test_tensor_list_op_under_compile_and_jit():
    rng = np.random.default_rng(28)
    xs0, w0 = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, 3)
    results = []
    for T in (torchish, torch):
        ns = _ns()
        wsum, setup = _wsum(T, ns)
        wsum.register_autograd(
            lambda ctx, g: ([g * ctx.saved_tensors[0]] * ctx.n, sum(ctx.saved_tensors[1:]) * g),
            setup_context=setup)
        w = T.tensor(w0, requires_grad=True)
        opt = T.optim.SGD([w], lr=0.1)

        def step(a, b):
            opt.zero_grad()
            loss = (wsum([a, b], w) ** 2).sum()
            loss.backward()
            opt.step()
            return loss
        step = torchish.compile(step) if T is torchish else step
        losses = [step(T.tensor(xs0[0]), T.tensor(xs0[1])).item() for _ in range(3)]
        results.append((losses, w.detach().numpy().copy()))
        if T is torchish:
            jitted = jax.jit(lambda a, b, v: wsum([T.from_jax(a), T.from_jax(b)],
                                                  T.from_jax(v)).jax())
            got = np.asarray(jitted(jnp.asarray(xs0[0]), jnp.asarray(xs0[1]), jnp.asarray(w0)))
            np.testing.assert_allclose(got, (xs0[0] + xs0[1]) * w0, rtol=1e-12)
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


# --- opcheck --------------------------------------------------------------------------------

OPCHECKS = {
    "good": ("x * s", True, ()),
    "good_subset": ("x * s", True, ("test_schema", "test_faketensor")),
    "no_fake": ("x * s", False, ()),
    "undeclared_mutation": ("x.add_(1) * s", True, ()),
    "fake_wrong_shape": ("x * s", "bad", ()),
}


@pytest.mark.parametrize("case", list(OPCHECKS))
@pytest.mark.parametrize("grad", [False, True])
def test_opcheck(case, grad):
    body, fake, utils = OPCHECKS[case]

    def program(T, ns):
        def f(x: T.Tensor, s: float) -> T.Tensor:
            return eval(body, {}, {"x": x, "s": s})
        op = T.library.custom_op(f"{ns}::f", f, mutates_args=())
        if fake:
            op.register_fake(lambda x, s: T.empty_like(x) if fake is True else T.empty(3))
        op.register_autograd(lambda ctx, g: (g * 2.0, None))
        kw = {"test_utils": utils} if utils else {}
        x = T.ones(2, requires_grad=grad)
        outcome = _outcome(lambda: T.library.opcheck(op, (x, 2.0), **kw), ns)
        if outcome[0] == "OpCheckError" and case == "fake_wrong_shape":
            # (PyTorch's fake-tensor message about the shapes is its own)
            outcome = (outcome[0], outcome[1].split(" failed with")[0])
        quiet = T.library.opcheck(op, (x, 2.0), raise_exception=False, **kw)
        if case == "fake_wrong_shape" and grad:
            # (PyTorch traces the backward with the wrong fake shapes too: torchish's compile
            # runs the real kernel, so only the fake-tensor check sees the mismatch)
            quiet.pop("test_aot_dispatch_dynamic")
        return outcome, sorted((k, v if v == "SUCCESS" else type(v).__name__)
                               for k, v in quiet.items()), x.tolist()
    ours, theirs = _both(program)
    assert ours == theirs


def test_opcheck_bad_test_utils():
    def program(T, ns):
        @T.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: T.Tensor) -> T.Tensor:
            return x + 1
        return _outcome(lambda: T.library.opcheck(f, (T.ones(1),), test_utils="nope"), ns)
    ours, theirs = _both(program)
    assert ours == theirs


def test_results_read_through_the_schema():
    def program(T, ns):
        @T.library.custom_op(f"{ns}::one", mutates_args=())
        def one(x: T.Tensor) -> tuple[T.Tensor, T.Tensor]:
            return x + 1

        @T.library.custom_op(f"{ns}::number", mutates_args=())
        def number(x: T.Tensor) -> float:
            return 3

        @T.library.custom_op(f"{ns}::nothing", mutates_args=())
        def nothing(x: T.Tensor) -> T.Tensor:
            return None
        x = T.ones(2)
        return (_outcome(lambda: one(x), ns), repr(number(x)), nothing(x))
    ours, theirs = _both(program)
    assert ours == theirs
