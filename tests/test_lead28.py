"""torch.utils._pytree's named-tuple / structseq predicates, differential against PyTorch:
return types are structseqs, not named tuples (the predicates take a class or an instance)."""
import collections

import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

PREDICATES = ["is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance", "is_structseq",
              "is_structseq_class", "is_structseq_instance"]
_Pair = collections.namedtuple("_Pair", "a b")


def _subjects(m):
    r = m.max(m.ones(2, 2), 0)
    return [r, type(r), _Pair(1, 2), _Pair, (1, 2), tuple, m.ones(2)]


@pytest.mark.parametrize("name", PREDICATES)
def test_predicates(name):
    ours = [getattr(torchish.utils._pytree, name)(s) for s in _subjects(torchish)]
    theirs = [getattr(torch.utils._pytree, name)(s) for s in _subjects(torch)]
    assert ours == theirs


def test_return_type_flattens_as_node():
    ours = torchish.utils._pytree.tree_flatten(torchish.max(torchish.ones(2, 2), 0))
    theirs = torch.utils._pytree.tree_flatten(torch.max(torch.ones(2, 2), 0))
    assert len(ours[0]) == len(theirs[0]) == 2
    assert repr(ours[1]) == repr(theirs[1])


# ---- torch.reshape / torch.tile take one sequence; integer 0-d tensors as sizes ---------------

def _shape_calls(m):
    x = m.ones(2, 3)
    return {
        "tile_varargs": lambda: m.tile(x, 2, 2), "tile_missing": lambda: m.tile(x),
        "tile_method_missing": lambda: x.tile(), "tile_method_varargs": lambda: x.tile(2, 2),
        "tile_keyword": lambda: m.tile(x, dims=(2,)), "tile_bad_element": lambda: m.tile(x, (2, "a")),
        "tile_int": lambda: m.tile(x, 2), "tile_method_keyword_int": lambda: x.tile(dims=2),
        "tile_method_int": lambda: x.tile(2), "tile_named": lambda: m.tile(input=x, dims=[2]),
        "reshape_varargs": lambda: m.reshape(x, 3, 2), "reshape_missing": lambda: m.reshape(x),
        "reshape_bad_element": lambda: m.reshape(x, (3, "a")),
        "reshape_keyword": lambda: m.reshape(x, shape=(6,)), "reshape_int": lambda: m.reshape(x, 6),
        "reshape_named": lambda: m.reshape(input=x, shape=[6]),
        "reshape_unknown_keyword": lambda: m.reshape(x, (6,), foo=1),
        "reshape_method_int": lambda: x.reshape(6),
        "reshape_method_keyword_int": lambda: x.reshape(shape=6),
        "reshape_tensor_size": lambda: m.reshape(x, [m.tensor(6)]),
        "tile_tensor_size": lambda: m.tile(x, (m.tensor(2),)),
        "repeat_tensor_sizes": lambda: x.repeat(m.tensor(2), 1),
        "repeat_tensor_sizes_tuple": lambda: x.repeat((m.tensor(2), 1)),
        "repeat_tensor_sizes_list": lambda: x.repeat([1, m.tensor(2)]),
        "repeat_tensor_second": lambda: x.repeat(1, m.tensor(2)),
        "tile_method_tensor": lambda: x.tile(m.tensor(2), 1),
    }


@pytest.mark.parametrize("name", list(_shape_calls(torch)))
def test_reshape_tile_calls(name):
    from differential import same_printed
    same_printed(lambda m: _shape_calls(m)[name](), torch)
