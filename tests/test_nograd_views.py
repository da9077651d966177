"""Views made under no_grad / inference_mode (and by multi-output ops or custom Functions)
used with grad mode on, compared with PyTorch: the nodes ops on them record (without the
view's edge), what backward and autograd.grad do with them, and PyTorch's errors for in-place
ops on them or on their base."""

import pytest

import torchish
from differential import outcome, same_printed

torch = pytest.importorskip("torch")


def same(run):
    return same_printed(run, torch)


def graph(t):
    """grad_fn name and its next_functions' names (None: no edge)."""
    fn = t.grad_fn
    if fn is None:
        return None
    return fn.name(), [(None if n is None else n.name(), i) for n, i in fn.next_functions]


def _no_grad_view(T, base=None):
    a = T.ones(3, requires_grad=True) if base is None else base
    with T.no_grad():
        v = a[:2]
    return a, v


# ---- ops on the view record a node without its edge ------------------------------------------

def test_op_on_no_grad_view_records():
    def run(T):
        a, v = _no_grad_view(T)
        y = v * 2
        out = [v.requires_grad, v.is_leaf, v.grad_fn, y.requires_grad, y.is_leaf, graph(y),
               repr(y)]
        y.sum().backward()
        return out + [a.grad, v.grad]
    assert "MulBackward0" in same(run)


def test_mixed_with_leaf_gradients():
    def run(T):
        a, v = _no_grad_view(T)
        b = T.ones(2, requires_grad=True)
        y = (v * b).sum()
        y.backward()
        return graph(y), a.grad, b.grad, graph(v.exp()), graph(T.stack([v, v])), \
            graph(T.cat([v, a]))
    same(run)


def test_view_of_no_grad_view_in_grad_mode():
    def run(T):
        a, v = _no_grad_view(T)
        w = v[0:1]
        z = v.view(2)
        return w.requires_grad, w.is_leaf, graph(w), w._base is a, graph(z)
    assert "SliceBackward0" in same(run)


def test_non_leaf_base_and_parameter():
    def run(T):
        x = T.ones(3, requires_grad=True)
        _, v = _no_grad_view(T, x * 1)
        y = v * 3
        y.sum().backward()
        p = T.nn.Parameter(T.ones(3))
        _, pv = _no_grad_view(T, p)
        return v.is_leaf, graph(y), x.grad, graph(pv * 2), type(pv).__name__
    same(run)


def test_autograd_grad_and_inputs():
    def run(T):
        a, v = _no_grad_view(T)
        out = [outcome(lambda: T.autograd.grad((v * 2).sum(), a)),
               outcome(lambda: T.autograd.grad((v * 2).sum(), v)),
               T.autograd.grad((v * 2).sum(), [a, v], allow_unused=True)]
        y = (v * 2).sum()
        y.backward(inputs=[v])
        return out + [v.grad, a.grad]
    same(run)


def test_create_graph_through_edgeless_nodes():
    def run(T):
        a, v = _no_grad_view(T)
        b = T.ones(2, requires_grad=True)
        y = (v.exp() * v).sum() + (b * b).sum()
        y.backward(create_graph=True)
        out = [a.grad, b.grad, b.grad.grad_fn.name()]
        g, = T.autograd.grad((v.sin() * b).sum(), b, create_graph=True)
        return out + [g, graph(g), T.autograd.grad(g.sum(), b, allow_unused=True)]
    same(run)


def test_base_stops_requiring_grad_and_later_requires_grad():
    def run(T):
        a, v = _no_grad_view(T)
        a.requires_grad_(False)
        c = T.ones(3)
        with T.no_grad():
            cv = c[:2]
        c.requires_grad_()
        return v.requires_grad, graph(v * 2), cv.requires_grad, graph(cv * 2)
    same(run)


def test_non_float_results_and_detach():
    def run(T):
        a, v = _no_grad_view(T)
        d = v.detach()
        return (v > 0).requires_grad, v.argmax().requires_grad, d.requires_grad, \
            d._base is a, d.mul_(2), v.requires_grad_(False).requires_grad
    same(run)


# ---- in-place on the view ---------------------------------------------------------------------

def test_inplace_on_no_grad_view():
    def run(T):
        a, v = _no_grad_view(T)
        b = T.ones(2, requires_grad=True)
        out = [outcome(lambda: v.mul_(2)), outcome(lambda: v.copy_(b)), a._version]
        with T.no_grad():
            v.mul_(2)   # allowed: both inside no_grad
        return out + [a.tolist()]
    assert "A view was created in no_grad mode and is being" in same(run)


def test_inplace_on_no_grad_view_of_plain_tensor():
    def run(T):
        c = T.ones(3)
        with T.no_grad():
            v = c[:2]
        b = T.ones(2, requires_grad=True)
        x = T.ones(3, requires_grad=True)
        ok = v.add_(1)   # nothing requires grad: not tracked, allowed
        return [ok, graph(v * b), outcome(lambda: v.copy_(b)), c.tolist(),
                outcome(lambda: T.arange(3)[:2].copy_(x[:2]))]
    assert "A view was created in no_grad mode" in same(run)


def test_inplace_on_view_of_no_grad_view():
    def run(T):
        a, v = _no_grad_view(T)
        w = v[0:1]
        return outcome(lambda: w.mul_(2)), graph(w)
    assert "Output 0 of Slice is a view of a view which was created in no_grad" in same(run)


def test_multi_output_views_under_no_grad():
    def run(T):
        a = T.ones(4, requires_grad=True)
        with T.no_grad():
            p, q = a.split(2)
            u = a.unbind()
            c = a.chunk(2)
        return [p.requires_grad, p.is_leaf, graph(p * 2), outcome(lambda: p.mul_(2)),
                outcome(lambda: u[0].mul_(2)), outcome(lambda: c[1].add_(1))]
    same(run)


def test_split_of_no_grad_view_in_grad_mode():
    def run(T):
        x = T.ones(4, requires_grad=True)
        with T.no_grad():
            v = x[:]
        p, q = v.split(2)
        return graph(p), outcome(lambda: p.mul_(2))
    assert "Output 0 of Split is a view and is being" in same(run)


# ---- the base modified in place: grad_fn refuses ----------------------------------------------

@pytest.mark.parametrize("where", ["no_grad_base", "no_grad_other_part", "grad_mode_base",
                                   "no_grad_view_itself"])
def test_base_modified_then_grad_fn(where):
    def run(T):
        x = T.ones(3, requires_grad=True)
        a, v = _no_grad_view(T, x * 1 if where == "grad_mode_base" else x)
        if where == "grad_mode_base":
            a.mul_(2)
        else:
            with T.no_grad():
                {"no_grad_base": a, "no_grad_other_part": a[2:],
                 "no_grad_view_itself": v}[where].mul_(2)
        return [outcome(lambda: graph(v)), v.requires_grad, outcome(lambda: v.is_leaf),
                outcome(lambda: graph(v * 2)), outcome(lambda: graph(v))]
    assert "its base or another view of its base has been modified inplace" in same(run)


def test_view_of_view_base_modified():
    def run(T):
        a, v = _no_grad_view(T)
        w = v[0:1]
        with T.no_grad():
            a.mul_(2)
        return outcome(lambda: w.grad_fn), outcome(lambda: w * 2)
    assert "Output 0 of Slice is a view of a view" in same(run)


def test_multi_output_and_custom_views_base_modified():
    def run(T):
        class F(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x[:2]

            @staticmethod
            def backward(ctx, g):
                return T.cat([g, g.new_zeros(1)])
        x = T.ones(3, requires_grad=True)
        a = x * 1
        y = F.apply(a)
        p, q = a.split(2)
        a.mul_(2)
        return outcome(lambda: y.grad_fn), outcome(lambda: p.grad_fn)
    same(run)


# ---- inference_mode ---------------------------------------------------------------------------

def test_inference_mode_view():
    def run(T):
        a = T.ones(3, requires_grad=True)
        with T.inference_mode():
            v = a[:2]
        b = T.ones(2, requires_grad=True)
        out = [v.requires_grad, v.is_leaf, v.is_inference(), graph(v * 2), graph(v * b),
               graph(v.exp()), outcome(lambda: v.mul_(2))]
        w = v[0:1]
        out += [graph(w), w.is_inference(), outcome(lambda: w.mul_(2))]
        with T.no_grad():
            v2 = v[:1]
        out.append(outcome(lambda: v2.mul_(2)))
        with T.no_grad():
            a.mul_(2)
        return out + [outcome(lambda: v.grad_fn), outcome(lambda: w.grad_fn)]
    assert "created in inference mode" in same(run)


def test_inference_tensors_in_autograd():
    def run(T):
        with T.inference_mode():
            t = T.ones(3)
            tv = t[:2]
        b = T.ones(2, requires_grad=True)
        out = [outcome(lambda: graph(tv * b)), outcome(lambda: graph(tv + b)),
               outcome(lambda: tv.mul_(2)), outcome(lambda: t.requires_grad_())]
        with T.no_grad():
            out.append(outcome(lambda: tv.mul_(2)))
        return out
    assert "Inference tensors cannot be saved for backward" in same(run)


# ---- custom autograd.Function -----------------------------------------------------------------

def _functions(T):
    class View(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[:2]

        @staticmethod
        def backward(ctx, g):
            return T.cat([g, g.new_zeros(1)])

    class Same(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class Double(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return View, Same, Double


def test_custom_function_on_no_grad_view():
    def run(T):
        _, _, Double = _functions(T)
        a, v = _no_grad_view(T)
        y = Double.apply(v)
        out = [y.requires_grad, graph(y)]
        y.sum().backward()
        return out + [a.grad]
    same(run)


def test_custom_function_view_outputs():
    def run(T):
        View, Same, _ = _functions(T)
        a = T.ones(3, requires_grad=True)
        with T.no_grad():
            y = View.apply(a)
            g = Same.apply(a)
        out = [y.requires_grad, y.is_leaf, outcome(lambda: graph(y)),
               outcome(lambda: y.mul_(2)), g.requires_grad, g.is_leaf, g._base is None,
               g._version]
        y2 = View.apply(a * 1)
        out += [graph(y2), outcome(lambda: y2.mul_(2)),
                outcome(lambda: Same.apply(a).mul_(2))]
        with T.no_grad():
            w = y2[0:1]
        out += [outcome(lambda: w.mul_(2)), graph(w * 1)]
        c = T.ones(3)
        s = Same.apply(c)
        h = View.apply(c)
        b = T.ones(2, requires_grad=True)
        return out + [s is c, s.requires_grad, s._base is c, outcome(lambda: h.mul_(2)),
                      outcome(lambda: h.copy_(b))]
    assert "created inside a custom Function" in same(run)


# ---- traced -----------------------------------------------------------------------------------

def test_no_grad_view_op_under_jit():
    """The same recording on JAX tracers: b's gradient flows, the view's base gets none."""
    import jax

    def f(x):
        a = torchish.as_tensor(x).clone().requires_grad_()
        b = torchish.as_tensor(x)[:2].clone().requires_grad_()
        with torchish.no_grad():
            v = a[:2]
        y = (v * b * 3).sum()
        assert y.grad_fn is not None
        y.backward()
        assert a.grad is None
        return b.grad._data

    x = jax.numpy.arange(3.0)
    assert f(x).tolist() == jax.jit(f)(x).tolist() == [0.0, 3.0]


def test_no_grad_view_saved_and_copied_without_extra_state(tmp_path):
    """The creation meta is autograd state: not saved with the tensor, nor deep-copied."""
    import copy

    def run(T):
        x = T.ones(4, requires_grad=True)
        with T.no_grad():
            v = x[:2]
        T.save({"v": v}, tmp_path / "v.pt")
        loaded = torch.load(tmp_path / "v.pt")["v"]
        c = copy.deepcopy(v)
        return loaded.__dict__, loaded.requires_grad, c.__dict__, c.requires_grad, c.is_leaf, \
            c.mul_(2)
    same(run)
