"""torchish.quasirandom.SobolEngine against real PyTorch: the direction numbers, unscrambled
and scrambled (seeded, and from the default generator) draws bit for bit, fast_forward,
reset, draw_base2, `out=`, and the errors."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _both(fn):
    return [fn(T) for T in (torchish, torch)]


def _np(t):
    return np.asarray(t.cpu().numpy())


@pytest.mark.parametrize("dim", [1, 2, 5, 50, 1000, 21201])
def test_unscrambled_matches(dim):
    ours, ref = _both(lambda T: T.quasirandom.SobolEngine(dim))
    np.testing.assert_array_equal(_np(ours.sobolstate), _np(ref.sobolstate))
    draws = ((1, "float32"), (8, "float32")) + (((9, "float64"),) if dim == 5 else ())
    for n, dtype in draws:
        a = ours.draw(n, dtype=getattr(torchish, dtype))
        b = ref.draw(n, dtype=getattr(torch, dtype))
        assert a.dtype == getattr(torchish, dtype) and a.shape == (n, dim)
        np.testing.assert_array_equal(_np(a), _np(b))
    np.testing.assert_array_equal(_np(ours.quasi), _np(ref.quasi))
    assert ours.quasi.dtype == torchish.int64
    assert ours.num_generated == ref.num_generated


@pytest.mark.parametrize("dim,seed", [(5, 7), (300, 123456789)])
def test_scrambled_seeded_matches(dim, seed):
    ours, ref = _both(lambda T: T.quasirandom.SobolEngine(dim, scramble=True, seed=seed))
    for name in ("sobolstate", "shift", "quasi"):
        np.testing.assert_array_equal(_np(getattr(ours, name)), _np(getattr(ref, name)))
    np.testing.assert_array_equal(_np(ours.draw(13)), _np(ref.draw(13)))
    np.testing.assert_array_equal(_np(ours.draw(3, dtype=torchish.float64)),
                                  _np(ref.draw(3, dtype=torch.float64)))


def test_scrambled_default_generator():
    # without a seed the scrambling comes from the default generator, which then moves on
    def run(T):
        T.manual_seed(11)
        engine = T.quasirandom.SobolEngine(4, scramble=True)
        return _np(engine.draw(6)), _np(T.rand(3)), repr(engine)
    ours, ref = _both(run)
    for a, b in zip(ours, ref):
        np.testing.assert_array_equal(a, b)


def test_first_point_dtype():
    # a scrambled first point is computed in the default dtype, then cast
    ours, ref = _both(lambda T: T.quasirandom.SobolEngine(3, scramble=True, seed=4))
    np.testing.assert_array_equal(_np(ours.draw(1, dtype=torchish.float64)),
                                  _np(ref.draw(1, dtype=torch.float64)))


def test_state_methods():
    def run(T):
        e = T.quasirandom.SobolEngine(3, scramble=True, seed=2)
        rows = [_np(e.fast_forward(5).draw(4)), e.num_generated]
        e.reset()
        rows += [_np(e.draw_base2(2)), _np(e.draw_base2(2)), e.num_generated]
        e.reset().fast_forward(1)
        rows += [_np(e.draw(3))]
        e.reset().fast_forward(0)
        rows += [_np(e.draw(2)), e.fast_forward(3).num_generated]
        out = T.empty(0, dtype=T.float64)
        got = e.draw(2, out=out, dtype=T.float64)
        rows += [got is out, tuple(out.shape), _np(out)]
        rows += [repr(e), repr(T.quasirandom.SobolEngine(2)), T.quasirandom.SobolEngine.MAXDIM]
        return rows
    ours, ref = _both(run)
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        np.testing.assert_array_equal(a, b)


def test_errors():
    def run(T):
        msgs = []
        for call in (lambda: T.quasirandom.SobolEngine(0),
                     lambda: T.quasirandom.SobolEngine(21202),
                     lambda: T.quasirandom.SobolEngine(2).draw(3).__class__ and
                     T.quasirandom.SobolEngine(2).fast_forward(3).draw_base2(1),
                     lambda: T.quasirandom.SobolEngine(2).draw(3, dtype=T.float16),
                     lambda: T.quasirandom.SobolEngine(2).fast_forward(1).draw(1, dtype=T.int64)):
            with pytest.raises(Exception) as info:
                call()
            msgs.append((type(info.value).__name__, str(info.value)))
        return msgs
    ours, ref = _both(run)
    assert ours == ref


def test_traced_draw():
    # the batch advance is made of torchish ops, so it also runs on tracers
    def f(x):
        engine = torchish.quasirandom.SobolEngine(3)
        engine.fast_forward(2)
        return engine.draw(4) + x
    got = torchish.compile(f)(torchish.zeros(1, device="cpu"))   # the engine lives on the CPU
    ref = torch.quasirandom.SobolEngine(3).fast_forward(2).draw(4)
    np.testing.assert_array_equal(_np(got), _np(ref))
