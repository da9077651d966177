"""`torch.einsum`: one fused op for eager calls, and when a graph is recorded PyTorch's own
decomposition (diagonals and sums per operand, then pairwise products through bmm, in
opt_einsum's order), so that `grad_fn` names PyTorch's nodes. Results get ATen's strides."""
import functools

import jax
import jax.numpy as jnp

from .. import _autocast
from ..backends import opt_einsum as _opt_einsum_flags
from ..autograd import grad_mode
from .einsum_equation import einsum_plan, sublist_equation
from .errors import tensor_element_error
from .linalg import bmm
from .registry import Promote, op

P = Promote


@op(promote=P.DEFAULT, grad_fn="ViewBackward0", method=False, tensors=("operands",))
def _einsum(equation, operands):
    return jnp.einsum(equation, *operands, precision=jax.lax.Precision.HIGHEST)


@functools.lru_cache(maxsize=None)
def _tensor_type():
    from .._tensor import Tensor  # a late import: _tensor imports this package
    return Tensor


@_autocast.casts("einsum")
def einsum(*args):
    """torch.einsum(equation, *operands), with operands also as one list, or the sublist form
    einsum(op1, [0, 1], op2, [1, 2], [0, 2])."""
    Tensor = _tensor_type()
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):  # sublist format
        equation = ",".join(sublist_equation(sub) for sub in args[1::2])
        if len(args) % 2:  # an output sublist at the end
            equation += "->" + sublist_equation(args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation, operands = args[0], args[1:]
        if not isinstance(equation, str):
            raise TypeError(f"einsum(): argument 'equation' (position 1) must be str, not "
                            f"{type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        return einsum(equation, *operands[0])
    try:
        shapes = tuple([tuple(x.shape) for x in operands])
    except AttributeError:
        shapes = None
    if shapes is None or not all(isinstance(x, Tensor) for x in operands):
        i, x = next((i, x) for i, x in enumerate(operands) if not isinstance(x, Tensor))
        raise tensor_element_error(i, 1, type(x))
    strategy = _opt_einsum_flags._path_strategy()
    plan = einsum_plan(equation, shapes, strategy)
    # op by op for the graph PyTorch records, and under autocast (where einsum is not listed,
    # e.g. on the CPU): PyTorch's bmm steps run in the lower precision, its mul steps do not;
    # for operands of mixed dtypes: PyTorch's mul steps promote, its bmm steps raise; for one
    # operand: PyTorch's diagonal / permute steps return a view of it
    if _autocast.ACTIVE[0] or len(operands) == 1 or \
            any(x.dtype is not operands[0].dtype for x in operands) or \
            (any(x.requires_grad for x in operands) and grad_mode.is_grad_enabled()):
        return _einsum_steps(plan, list(operands), strategy)
    from .._memory_layout import lay_out
    return lay_out(_einsum(plan, list(operands)), _einsum_strides(plan, shapes, strategy))


@functools.lru_cache(maxsize=1024)
def _einsum_strides(plan, shapes, strategy):
    """The strides of PyTorch's result (its permute/bmm steps leave some permuted): those
    steps run once on meta tensors."""
    from .. import empty
    with grad_mode.no_grad():
        return _einsum_steps(plan, [empty(s, device="meta") for s in shapes], strategy).stride()


def _einsum_labels(plan):
    """The checked explicit equation as per-operand label lists ('...' one item) and the
    output's."""
    lhs, rhs = plan.split("->")

    def labels(text):
        return ["..." if t == "." else t for t in text.replace("...", ".")]
    return [labels(t) for t in lhs.split(",")], labels(rhs)


def _einsum_steps(plan, operands, strategy="auto"):
    """PyTorch's einsum op by op, for the graph it records: each operand permuted to one
    dim order (output dims, then contracted ones; diagonals for repeated labels, size-1 dims
    for missing ones), then pairwise products (`_sumproduct_pair`: mul, or permute, reshape,
    bmm, view, permute), in opt_einsum's order for three or more operands (left to right
    where torch.backends.opt_einsum is off: `strategy` None)."""
    ins, out = _einsum_labels(plan)
    ell = max((x.ndim - len(labs) + 1 for labs, x in zip(ins, operands) if "..." in labs),
              default=0)
    index, n = {}, 0
    for lab in out:
        if lab == "...":
            ell_index, n = n, n + ell
        else:
            index[lab], n = n, n + 1
    out_size = n
    if "..." not in out:
        ell_index, n = n, n + ell
    for lab in sorted({lab for labs in ins for lab in labs if lab != "..."}):
        if lab not in index:
            index[lab], n = n, n + 1
    ops = []
    for labs, x in zip(ins, operands):
        perm, first, j = [-1] * n, {}, 0
        for lab in labs:
            if lab == "...":   # (missing leading dims are added below, as size 1)
                for k in range(ell - (x.ndim - len(labs) + 1), ell):
                    perm[ell_index + k], j = j, j + 1
            elif lab in first:   # a repeated label: its diagonal, where the label first was
                x = x.diagonal(0, first[lab], j).movedim(-1, first[lab])
            else:
                first[lab] = j
                perm[index[lab]], j = j, j + 1
        for k in range(n):   # size-1 dims for labels (and ellipsis dims) this operand lacks
            if perm[k] == -1:
                x = x.unsqueeze(j)
                perm[k], j = j, j + 1
        ops.append(x.permute(perm))
    if len(ops) == 1:
        if n > out_size:
            return ops[0].sum(list(range(out_size, n)))
        return ops[0]
    counts = [sum(op.shape[d] != 1 for op in ops) if d >= out_size else 0 for d in range(n)]
    path = None
    if len(ops) > 2 and strategy is not None:
        import opt_einsum
        path = opt_einsum.contract_path(plan, *[tuple(x.shape) for x in operands],
                                        shapes=True, optimize=strategy)[0]
        if any(len(pair) != 2 for pair in path):   # not a path of pairs: no graph to match
            return _einsum(plan, operands)
    step = 0
    while len(ops) > 1:
        i, j = (0, 1) if path is None else sorted(path[step])
        step += 1
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_size, n):
            if a.shape[d] != 1 and b.shape[d] != 1:
                counts[d] -= 1
                if counts[d] == 1:
                    sum_dims.append(d)
                    counts[d] = 0
            elif counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    counts[d] = 0
        if a_sum:
            a = a.sum(a_sum, keepdim=True)
        if b_sum:
            b = b.sum(b_sum, keepdim=True)
        product = _sumproduct_pair(a, b, sum_dims)
        if path is None:
            ops.insert(0, product)
        else:
            ops.append(product)
    result = ops[0]
    if n > out_size:   # the contracted dims, all of size 1 now
        return result.view(tuple(result.shape[:out_size]))
    return result


def _sumproduct_pair(left, right, sum_dims):
    """The product of two operands of equal rank summed over `sum_dims` (kept, as size 1):
    dims in both (lro), only in the left (lo) or right (ro) become the batch, rows and
    columns of one bmm."""
    if not sum_dims:
        return left * right
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for d in range(left.ndim):
        sl, sr = left.shape[d] != 1, right.shape[d] != 1
        if d in sum_dims:
            if sl and sr:
                sum_size *= left.shape[d]
            elif sl:
                left = left.sum(d, keepdim=True)
            elif sr:
                right = right.sum(d, keepdim=True)
        elif sl and sr:
            lro.append(d)
            lro_size *= left.shape[d]
        elif sl:
            lo.append(d)
            lo_size *= left.shape[d]
        else:
            ro.append(d)
            ro_size *= right.shape[d]
    if lo and ro and ro[-1] < lo[0]:   # bmm then yields the output's dim order directly
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_shape = [left.shape[d] for d in lro] + [left.shape[d] for d in lo] + \
        [1] * len(sum_dims) + [right.shape[d] for d in ro]
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [0] * len(out_shape)
    for k, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = k
    left = left.permute(lperm).reshape(lro_size, lo_size, sum_size)
    right = right.permute(rperm).reshape(lro_size, sum_size, ro_size)
    return bmm(left, right).view(out_shape).permute(operm)


PLAIN = ["einsum"]
