"""A saved operand is read at backward: a write into its storage that PyTorch does not count
as an in-place change (through `.data`) is seen by the gradient, as in PyTorch."""
import pytest

import torchish

torch = pytest.importorskip("torch")


def _program(T, case):
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = T.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    if case == "leaf":            # mul and a matmul through a transposed view save x and w
        y = (x * x).sum() + (x @ w.t().t()).sum()
        x.data.mul_(10)
        w.data[0, 0] = -7.0
    elif case == "view operand":  # the saved operands are views of one base
        c = w.view(2, 3)
        y = (c[0] * c[1]).sum() + x.sum()
        w.data[0] = 100.0
    elif case == "inplace op":    # x.mul_(w) saves w
        h = x.unsqueeze(1) * T.ones(1, 2)
        h.mul_(w)
        y = h.sum()
        w.data.add_(1.0)
    elif case == "storage swap":  # `.data = ...` gives x new values, the saved x reads them
        y = (x * w[:, 0]).sum()
        x.data = T.tensor([5.0, 5.0, 5.0])
    elif case == "detached copy":  # a clone is not the saved storage
        y = (x * w[:, 1]).sum()
        x.detach().clone().mul_(3)
    return x, w, y


CASES = ["leaf", "view operand", "inplace op", "storage swap", "detached copy"]


@pytest.mark.parametrize("case", CASES)
def test_gradient_reads_what_dot_data_wrote(case):
    # several rounds: the repeated graph takes the fused backward pass after the first ones
    for _ in range(4):
        results = []
        for T in (torch, torchish):
            x, w, y = _program(T, case)
            y.backward()
            results.append((x.grad.tolist(), w.grad.tolist()))
        assert results[1] == results[0]


def test_written_again_between_two_backwards():
    grads = []
    for T in (torch, torchish):
        x = T.tensor([1.0, 2.0], requires_grad=True)
        w = T.tensor([3.0, 4.0], requires_grad=True)
        y = (x * w).sum()
        y.backward(retain_graph=True)
        w.data.mul_(2)
        y.backward(retain_graph=True)
        w.data.add_(1)
        y.backward()
        grads.append(x.grad.tolist())
    assert grads[1] == grads[0]


def test_in_place_write_still_raises():
    x = torchish.tensor([1.0, 2.0], requires_grad=True)
    w = torchish.tensor([3.0, 4.0])
    y = (x * w).sum()
    w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


@pytest.mark.parametrize("op", ["exp", "tanh", "sigmoid", "sqrt", "relu"])
@pytest.mark.parametrize("how", ["write", "swap"])
def test_saved_result_written_through_data(op, how):
    """Ops whose derivative reads their result: a `.data` write into it is seen; giving the
    result another storage (`y.data = ...`) is not (PyTorch saved the output's storage)."""
    grads = []
    for T in (torch, torchish):
        for _ in range(4):   # (the fused backward after a few rounds)
            x = T.tensor([0.5, 1.5, 2.0], requires_grad=True)
            y = getattr(T, op)(x)
            if how == "write":
                y.data.mul_(0.5)
            else:
                y.data = T.tensor([3.0, 3.0, 3.0])
            y.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[1] == pytest.approx(grads[0], rel=1e-6)
