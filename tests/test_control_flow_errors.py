"""torch.cond / torch.while_loop errors against PyTorch's eager ones (dynamo traces both
branches first): exception type and message, up to the parts that name PyTorch's internals
(object addresses, FX graphs, fake-tensor call arguments); and that nothing is changed when
a branch tries to mutate what it was given."""
import re
import warnings

import pytest

import torchish

torch = pytest.importorskip("torch")

warnings.filterwarnings("ignore", message=".*while_loop.*|.*cond.*")


def _mutalias(a):
    a.add_(1)
    return a


def _twice(a):
    b = a * 2
    return b, b


# each case: (name, f(m, x) that makes the call); x requires grad
COND = [
    ("alias_input", lambda m, x: m.cond(m.tensor(True), lambda a: a, lambda a: a * 2, (x,))),
    ("alias_view", lambda m, x: m.cond(m.tensor(True), lambda a: a.view(3), lambda a: a * 2,
                                       (x,))),
    ("alias_untaken", lambda m, x: m.cond(m.tensor(True), lambda a: a * 1, lambda a: a, (x,))),
    ("alias_outputs", lambda m, x: m.cond(m.tensor(True), _twice, lambda a: (a * 1, a * 3),
                                          (x,))),
    ("alias_closure", lambda m, x: m.cond(m.tensor(True), lambda a: x, lambda a: a * 3,
                                          (x * 1,))),
    ("alias_before_structure", lambda m, x: m.cond(m.tensor(True), lambda a: (a, a * 2),
                                                   lambda a: (a * 1,), (x,))),
    ("mutate", lambda m, x: m.cond(m.tensor(True), lambda a: a.add_(1), lambda a: a * 2,
                                   (x.detach().clone(),))),
    ("mutate_untaken", lambda m, x: m.cond(m.tensor(True), lambda a: a * 1, _mutalias,
                                           (x.detach().clone(),))),
    ("mutate_before_alias", lambda m, x: m.cond(m.tensor(True), _mutalias, lambda a: a * 2,
                                                (x.detach().clone(),))),
    ("structure", lambda m, x: m.cond(m.tensor(True), lambda a: (a * 1, a * 2),
                                      lambda a: (a * 1,), (x,))),
    ("dict_keys", lambda m, x: m.cond(m.tensor(True), lambda a: {"a": a * 1},
                                      lambda a: {"b": a * 1}, (x,))),
    ("none", lambda m, x: m.cond(m.tensor(True), lambda a: None, lambda a: None, (x,))),
    ("none_in_tuple", lambda m, x: m.cond(m.tensor(True), lambda a: (a * 1, None),
                                          lambda a: (a * 1, None), (x,))),
    ("none_before_alias", lambda m, x: m.cond(m.tensor(True), lambda a: None, lambda a: a,
                                              (x,))),
    ("float", lambda m, x: m.cond(m.tensor(True), lambda a: 1.0, lambda a: 2.0, (x,))),
    ("str", lambda m, x: m.cond(m.tensor(True), lambda a: "s", lambda a: "t", (x,))),
    ("dtype", lambda m, x: m.cond(m.tensor(True), lambda a: a * 1, lambda a: (a * 1).double(),
                                  (x,))),
    ("dtype_int", lambda m, x: m.cond(m.tensor(True), lambda a: a.long() * 1,
                                      lambda a: a.int() * 1, (x,))),
    ("dim", lambda m, x: m.cond(m.tensor(True), lambda a: a * 1,
                                lambda a: (a * 1).reshape(3, 1), (x,))),
    ("dtype_and_dim", lambda m, x: m.cond(m.tensor(True), lambda a: a * 1,
                                             lambda a: (a * 1).reshape(3, 1).double(), (x,))),
    ("int_vs_tensor", lambda m, x: m.cond(m.tensor(True), lambda a: 1, lambda a: a * 2, (x,))),
    ("bools", lambda m, x: m.cond(m.tensor(True), lambda a: True, lambda a: False, (x,))),
    ("bind", lambda m, x: m.cond(m.tensor(True), lambda a, b: a * 1, lambda a: a * 2, (x,))),
    ("bind_false", lambda m, x: m.cond(m.tensor(False), lambda a: a * 1, lambda a, b: a * 2,
                                       (x,))),
    ("pred_empty", lambda m, x: m.cond(m.tensor([]), lambda a: a * 1, lambda a: a * 2, (x,))),
    ("pred_str", lambda m, x: m.cond("yes", lambda a: a * 1, lambda a: a * 2, (x,))),
    ("pred_none", lambda m, x: m.cond(None, lambda a: a * 1, lambda a: a * 2, (x,))),
    ("operands_tensor", lambda m, x: m.cond(m.tensor(True), lambda a: a * 1, lambda a: a * 2,
                                            x)),
    ("operands_float", lambda m, x: m.cond(m.tensor(True), lambda a, b: a * 1,
                                           lambda a, b: a * 2, (x, 2.0))),
    ("not_callable", lambda m, x: m.cond(m.tensor(True), 3, lambda a: a * 2, (x,))),
    ("untaken_op_error", lambda m, x: m.cond(m.tensor(True), lambda a: a * 1,
                                             lambda a: a @ m.ones(2), (x,))),
]

WHILE = [
    ("shape", lambda m, v: m.while_loop(lambda i, v: i < 3,
                                        lambda i, v: (i + 1, m.cat([v, v])), (m.tensor(0), v))),
    ("dtype", lambda m, v: m.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v.double()),
                                        (m.tensor(0), v))),
    ("shape_and_dtype", lambda m, v: m.while_loop(
        lambda i, v: i < 3, lambda i, v: (i + 1, m.cat([v, v]).double()), (m.tensor(0), v))),
    ("int_to_float", lambda m, v: m.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1.5, v * 2),
                                               (m.tensor(0), v))),
    ("number", lambda m, v: m.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1,),
                                         (m.tensor(0), v))),
    ("number_no_iteration", lambda m, v: m.while_loop(lambda i, v: i < 0, lambda i, v: (i + 1,),
                                                      (m.tensor(0), v))),
    ("cond_alias", lambda m, v: m.while_loop(lambda i, v: i, lambda i, v: (i * 0 > 0, v * 2),
                                             (m.tensor(True), v))),
    ("cond_float", lambda m, v: m.while_loop(lambda i, v: v.sum(), lambda i, v: (i - 1, v * 0),
                                             (m.tensor(3), v))),
    ("cond_int", lambda m, v: m.while_loop(lambda i, v: i * 1, lambda i, v: (i - 1, v * 0),
                                           (m.tensor(3), v))),
    ("cond_shape", lambda m, v: m.while_loop(lambda i, v: v > 0, lambda i, v: (i - 1, v * 0),
                                             (m.tensor(3), v))),
    ("cond_true", lambda m, v: m.while_loop(lambda i, v: True, lambda i, v: (i - 1, v * 0),
                                            (m.tensor(3), v))),
    ("body_alias", lambda m, v: m.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v),
                                             (m.tensor(0), v))),
    ("body_mutation", lambda m, v: m.while_loop(lambda i, v: i < 3,
                                                lambda i, v: (i.add_(1), v * 2),
                                                (m.tensor(0), v))),
    ("float_carried", lambda m, v: m.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * 2),
                                                (m.tensor(0), 2.0))),
    ("bind_cond", lambda m, v: m.while_loop(lambda i: i < 3, lambda i, v: (i + 1, v * 2),
                                            (m.tensor(0), v))),
    ("bind_body", lambda m, v: m.while_loop(lambda i, v: i < 3, lambda i: (i + 1,),
                                            (m.tensor(0), v))),
    ("scalar_carried", lambda m, v: m.while_loop(lambda i: i < 3, lambda i: i + 1, m.tensor(0))),
    ("tensor_carried", lambda m, v: m.while_loop(lambda i: i < 3, lambda i: i + 1, v)),
    ("not_callable", lambda m, v: m.while_loop(3, lambda i, v: (i + 1, v * 2),
                                               (m.tensor(0), v))),
]


def _key(e):
    """The part of an error PyTorch's eager run and ours share."""
    text = str(e)
    for cut in ("\n\n  Developer debug context", "\nfrom user code", "\n\nfrom user code"):
        text = text.split(cut)[0]
    text = re.sub(r"Found in .*", "Found in", text).rstrip("\n")
    if type(e).__name__ == "TorchRuntimeError":   # (the fake-tensor call's arguments differ)
        text = re.sub(r"call_function .*?: got ", "call_function ...: got ", text)
    return type(e).__name__, isinstance(e, RuntimeError), text


def _outcome(m, case, arg):
    if m is torch:   # (dynamo's messages change once earlier calls made shapes dynamic)
        torch._dynamo.reset()
    try:
        case(m, arg)
    except Exception as e:   # noqa: BLE001 - the exception is what is compared
        return _key(e)
    return "no error"


@pytest.mark.parametrize("name,case", COND, ids=[c[0] for c in COND])
def test_cond_errors_match_pytorch(name, case):
    ours = _outcome(torchish, case, torchish.tensor([1., 2., 3.], requires_grad=True))
    theirs = _outcome(torch, case, torch.tensor([1., 2., 3.], requires_grad=True))
    if name == "untaken_op_error":   # (the op's own message: another test's business)
        ours, theirs = ours[:2] + (ours[2].split("\n")[0],), theirs[:2] + (
            theirs[2].split("\n")[0],)
    if name == "dtype_and_dim":   # (a fresh PyTorch process reports the dim first, one whose
        # dynamo has recompiled earlier cases (dynamic shapes) the dtype: keep the shared part)
        ours, theirs = [o[:2] + (o[2].split(" expected same")[0],) for o in (ours, theirs)]
    assert ours == theirs
    assert ours != "no error"


@pytest.mark.parametrize("name,case", WHILE, ids=[c[0] for c in WHILE])
def test_while_loop_errors_match_pytorch(name, case):
    ours = _outcome(torchish, case, torchish.ones(2))
    theirs = _outcome(torch, case, torch.ones(2))
    assert ours == theirs
    assert ours != "no error"


def _mutation_story(m):
    """A branch that changes a closure's buffer or an operand: refused, and nothing changed
    (PyTorch only traces the branch before it refuses)."""
    buf, op = m.zeros(3), m.ones(3)

    def bump(a):
        buf.add_(1)
        return a * 2
    story = []
    for pred in (True, False):
        for t, f in ((bump, lambda a: a * 3), (lambda a: a * 3, lambda a: a.mul_(2))):
            try:
                m.cond(m.tensor(pred), t, f, (op,))
                story.append("no error")
            except RuntimeError as e:
                story.append(type(e).__name__)
    story.append((buf.tolist(), op.tolist(), op._version))
    return story


def test_refused_mutation_changes_nothing():
    assert _mutation_story(torchish) == _mutation_story(torch)


def test_errors_inside_compile():
    def mismatched(a):
        return torchish.cond(a.sum() > 0, lambda t: t * 2, lambda t: t.double(), (a,))

    def mutating(a):
        return torchish.cond(a.sum() > 0, lambda t: t.add_(1), lambda t: t * 2, (a,))
    x = torchish.ones(3)
    with pytest.raises(torchish._dynamo.exc.TorchDynamoException,
                       match="expected same dtype but got torch.float32 and torch.float64"):
        torchish.compile(mismatched)(x)
    with pytest.raises(torchish._dynamo.exc.UncapturedHigherOrderOpError,
                       match="Encountered input mutation during higher order op tracing"):
        torchish.compile(mutating)(x)
    assert x.tolist() == [1.0, 1.0, 1.0]


def test_while_loop_errors_inside_compile():
    def growing(a):
        return torchish.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v.double()),
                                   (torchish.tensor(0), a))

    def aliasing(a):
        return torchish.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v),
                                   (torchish.tensor(0), a))
    with pytest.raises(torchish._dynamo.exc.UncapturedHigherOrderOpError,
                       match=r"pair\[1\] differ in 'dtype: torch.float64 vs torch.float32'"):
        torchish.compile(growing)(torchish.ones(2))
    with pytest.raises(torchish._dynamo.exc.UncapturedHigherOrderOpError,
                       match="Encountered aliasing during higher order op tracing"):
        torchish.compile(aliasing)(torchish.ones(2))
