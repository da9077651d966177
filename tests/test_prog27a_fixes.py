"""Fixes found by the sweep-27 ported programs (PROG27A: speech framing, batched graphs,
contrastive views) and probes around them, differential against real PyTorch:
repeat_interleave's checks of its counts (dtype, rank, sign, size along dim, a single count
broadcast, output_size) in PyTorch's order and words, with and without autograd, and
index_add's alpha converted to the tensor's type (an integral tensor truncates a float alpha; a
complex alpha must fit a real tensor)."""
import pytest

from differential import same_printed

torch = pytest.importorskip("torch")


def _grad_input(T):
    return T.tensor([1.0, 2.0], requires_grad=True)


INTERLEAVE = {
    # repeat_interleave(repeats): indices repeated by their counts
    "counts": (lambda T: T.repeat_interleave(T.tensor([2, 0, 1])), False),
    "counts_int32": (lambda T: T.repeat_interleave(T.tensor([1, 2], dtype=T.int32)), False),
    "counts_empty": (lambda T: T.repeat_interleave(T.tensor([], dtype=T.long)), False),
    "counts_negative": (lambda T: T.repeat_interleave(T.tensor([2, -1])), True),
    "counts_negative_first": (lambda T: T.repeat_interleave(T.tensor([-2, 1])), True),
    "counts_float": (lambda T: T.repeat_interleave(T.tensor([1.0, 2.0])), True),
    "counts_float_2d": (lambda T: T.repeat_interleave(T.tensor([[1.0, 2.0]])), True),
    "counts_int16": (lambda T: T.repeat_interleave(T.tensor([1, 2], dtype=T.int16)), True),
    "counts_bool": (lambda T: T.repeat_interleave(T.tensor([True, False])), True),
    "counts_2d": (lambda T: T.repeat_interleave(T.tensor([[1, 2]])), True),
    "counts_0d": (lambda T: T.repeat_interleave(T.tensor(3)), True),
    "counts_output_size": (lambda T: T.repeat_interleave(T.tensor([1, 2]), output_size=3), False),
    "counts_bad_output_size": (lambda T: T.repeat_interleave(T.tensor([1, 2]), output_size=4),
                               True),
    # repeat_interleave(input, repeats)
    "tensor_negative": (lambda T: T.repeat_interleave(T.tensor([1, 2]), T.tensor([1, -1])), True),
    "tensor_0d_negative": (lambda T: T.repeat_interleave(T.tensor([1, 2]), T.tensor(-1)), True),
    "tensor_float": (lambda T: T.repeat_interleave(T.tensor([1, 2]), T.tensor([1.0, 2.0])), True),
    "tensor_0d_float": (lambda T: T.repeat_interleave(T.tensor([1, 2]), T.tensor(1.0)), True),
    "tensor_2d": (lambda T: T.repeat_interleave(T.tensor([1, 2]), T.tensor([[1, 2]])), True),
    "tensor_wrong_size_float": (
        lambda T: T.repeat_interleave(T.tensor([1, 2]), T.tensor([1.0, 2, 3])), True),
    "tensor_single_count": (lambda T: T.repeat_interleave(T.tensor([1, 2]), T.tensor([2])), False),
    "tensor_dim1_size": (lambda T: T.repeat_interleave(T.ones(2, 2), T.tensor([1, 2, 3]), dim=1),
                         True),
    "tensor_flat_size": (lambda T: T.repeat_interleave(T.ones(2, 2), T.tensor([1, 2, 3])), True),
    "tensor_dim_negative": (
        lambda T: T.repeat_interleave(T.ones(2, 2), T.tensor([1, -2]), dim=1), True),
    "tensor_dim_last": (
        lambda T: T.arange(4).view(2, 2).repeat_interleave(T.tensor([1, 2]), dim=-1), False),
    "tensor_output_size": (
        lambda T: T.repeat_interleave(T.ones(2), T.tensor([1, 2]), output_size=3), False),
    "tensor_bad_output_size": (
        lambda T: T.repeat_interleave(T.ones(2), T.tensor([1, 2]), output_size=4), True),
    "int_negative": (lambda T: T.tensor([1, 2]).repeat_interleave(-1), True),
    "int_negative_dim": (lambda T: T.tensor([1, 2]).repeat_interleave(-1, dim=0), True),
    "int_bad_output_size": (lambda T: T.repeat_interleave(T.ones(2), 2, output_size=3), True),
    "int_dim": (lambda T: T.arange(4).view(2, 2).repeat_interleave(2, dim=0), False),
    # with autograd (PyTorch records index_select / expand steps)
    "grad_int_negative": (lambda T: _grad_input(T).repeat_interleave(-1), True),
    "grad_tensor_negative": (lambda T: _grad_input(T).repeat_interleave(T.tensor([1, -1])), True),
    "grad_int_bad_output_size": (
        lambda T: _grad_input(T).repeat_interleave(2, output_size=3), True),
    "grad_tensor_bad_output_size": (
        lambda T: _grad_input(T).repeat_interleave(T.tensor([1, 2]), output_size=4), True),
    "grad_single_count": (lambda T: _grad_input(T).repeat_interleave(T.tensor([2])), False),
    "grad_tensor": (lambda T: _grad_input(T).repeat_interleave(T.tensor([2, 1]), output_size=3),
                    False),
}


@pytest.mark.parametrize("case", sorted(INTERLEAVE))
def test_repeat_interleave_counts(case):
    run, error = INTERLEAVE[case]
    same_printed(run, torch, error)


def _index_add(T, dtype, alpha, inplace=False):
    base = T.zeros(3, dtype=getattr(T, dtype))
    source = T.ones(3, dtype=getattr(T, dtype))
    index = T.tensor([0, 0, 2])
    if inplace:
        return base.index_add_(0, index, source, alpha=alpha)
    return base.index_add(0, index, source, alpha=alpha)


@pytest.mark.parametrize("dtype,alpha,error", [
    ("long", 2.5, False), ("long", -1.5, False), ("long", 2.9, False), ("int32", 2.5, False),
    ("long", True, False), ("long", 3, False), ("uint8", -1.5, True), ("uint8", 300, True),
    ("float32", 2.5, False), ("float32", True, False), ("float32", 1 + 1j, True),
    ("float32", 2 + 0j, False), ("complex64", 1 + 1j, False)])
def test_index_add_alpha_converted(dtype, alpha, error):
    same_printed(lambda T: _index_add(T, dtype, alpha), torch, error)
    same_printed(lambda T: _index_add(T, dtype, alpha, inplace=True), torch, error)


def test_index_add_alpha_traced():
    """The conversion is static (alpha is a Python number): it holds under compile too."""
    import torchish
    compiled = torchish.compile(lambda a, i, s: a.index_add(0, i, s, alpha=2.5))
    index = [0, 0, 2]
    ours = compiled(torchish.zeros(3, dtype=torchish.long), torchish.tensor(index),
                    torchish.ones(3, dtype=torchish.long))
    theirs = torch.zeros(3, dtype=torch.long).index_add(0, torch.tensor(index),
                                                        torch.ones(3, dtype=torch.long), alpha=2.5)
    assert ours.tolist() == theirs.tolist()


def test_repeat_interleave_grad_values():
    """The autograd path still repeats and backpropagates as PyTorch does."""
    import torchish
    grads = []
    for T in (torch, torchish):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x.repeat_interleave(T.tensor([2, 0, 3]))
        (y * T.arange(5.0)).sum().backward()
        grads.append((y.tolist(), y.grad_fn.name(), x.grad.tolist()))
    assert grads[1] == grads[0]


@pytest.mark.parametrize("shapes", [[(1,), ()], [(), (1,)], [()]])
def test_pad_sequence_zero_dim(shapes):
    """A 0-d sequence: PyTorch's errors (the first one's trailing sizes, then size(0))."""
    same_printed(lambda T: T.nn.utils.rnn.pad_sequence([T.ones(s) for s in shapes]), torch, True)


WINDOWS = {
    "alpha_beta_keywords": lambda T: T.hamming_window(5, alpha=0.5, beta=0.5),
    "alpha_keyword": lambda T: T.hamming_window(5, alpha=0.5),
    "beta_keyword": lambda T: T.hamming_window(5, beta=0.5),
    "beta_after_periodic": lambda T: T.hamming_window(5, True, beta=0.5),
    "alpha_after_periodic": lambda T: T.hamming_window(5, True, alpha=0.5),
    "all_positional": lambda T: T.hamming_window(5, False, 0.5, 0.5),
    "beta_keyword_last": lambda T: T.hamming_window(5, False, 0.5, beta=0.3),
    "all_keywords": lambda T: T.hamming_window(5, periodic=False, alpha=0.5, beta=0.3),
    "defaults": lambda T: T.hamming_window(5),
    "int_alpha": lambda T: T.hamming_window(4, True, 1),
}


@pytest.mark.parametrize("case", sorted(WINDOWS))
def test_hamming_window_overloads(case):
    """alpha only after periodic, beta only after alpha: otherwise the parser's TypeError."""
    same_printed(WINDOWS[case], torch)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_conv_transpose_output_padding_error(nd):
    """A 1-d transposed conv reports the unit height ATen runs it over."""
    def run(T):
        f = getattr(T.nn.functional, f"conv_transpose{nd}d")
        return f(T.ones(1, 2, *[4] * nd), T.ones(2, 1, *[3] * nd), stride=2, output_padding=2)
    same_printed(run, torch, True)
    same_printed(lambda T: T.nn.functional.conv_transpose1d(
        T.ones(2, 4), T.ones(2, 1, 3), stride=2, dilation=3, output_padding=3), torch, True)


@pytest.mark.parametrize("call", ["torch.flip(x)", "x.flip()", "x.flip(dims=())", "x.flip([])",
                                  "x.flip(0, 1)", "x.flip(dims=(0, 1))", "torch.flip(x, None)",
                                  "x.flip(None)"])
def test_flip_dims_required(call):
    """`dims` has no default: omitting it is the parser's TypeError, an empty list flips
    nothing."""
    same_printed(lambda T: eval(call, {"torch": T, "x": T.arange(4.0).view(2, 2)}), torch)


@pytest.mark.parametrize("call", [
    "torch.repeat_interleave()", "torch.repeat_interleave(repeats=torch.tensor([1, 2]))",
    "torch.repeat_interleave(repeats=torch.tensor([1, 2]), output_size=3)",
    "torch.repeat_interleave(repeats=2)",
    "torch.repeat_interleave(input=torch.tensor([1, 2]), repeats=torch.tensor([1, 2]))",
    "torch.tensor([1, 2]).repeat_interleave(repeats=2)",
    "torch.tensor([1, 2]).repeat_interleave()",
    "torch.tensor([1, 2]).repeat_interleave(torch.tensor([2, 1]), 0, output_size=3)"])
def test_repeat_interleave_overloads(call):
    """The counts-only overload is a function's (also as `repeats=`); the method has none."""
    same_printed(lambda T: eval(call, {"torch": T}), torch)
