"""einsum equations checked as PyTorch checks them: parsing (subscripts, ellipses, operand
count), dimension counts and sizes (size-1 dimensions broadcast), with ATen's messages in the
order ATen raises them; `einsum_plan` returns the explicit equation `jnp.einsum` takes."""
import functools

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _parse_inputs(lhs, n):
    """Split the input side into per-operand label lists ('...' kept as one item), raising
    ATen's parse errors in the order ATen meets them (left to right)."""
    labels, found_ell, i = [[]], False, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            k = len(labels) - 1
            if found_ell:
                raise RuntimeError(f"einsum(): found '.' for operand {k} for which an ellipsis "
                                   "was already found")
            if lhs[i:i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for operand {k} that is not part of "
                                   "any ellipsis")
            labels[-1].append("...")
            found_ell = True
            i += 2
        elif c == ",":
            labels.append([])
            if len(labels) > n:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
            found_ell = False
        elif c in _LETTERS:
            labels[-1].append(c)
        elif c != " ":
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                               "string, subscripts must be in [a-zA-Z]")
        i += 1
    if len(labels) != n:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return labels


def _parse_output(rhs, offset, counts):
    out, found_ell, i = [], False, 0
    while i < len(rhs):
        c = rhs[i]
        if c == ".":
            if found_ell:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                   "already found")
            if rhs[i:i + 3] != "...":
                raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                   "ellipsis (...)")
            out.append("...")
            found_ell = True
            i += 2
        elif c in _LETTERS:
            if c in out:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   "the output")
            if c not in counts:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
            out.append(c)
        elif c != " ":
            raise RuntimeError(f"einsum(): invalid subscript given at index {offset + i} in the "
                               "equation string, subscripts must be in [a-zA-Z]")
        i += 1
    return out


def _check_sizes(labels, shapes, ell_ndim):
    # PyTorch broadcasts size-1 dimensions (named and under the ellipsis) across operands;
    # repeated labels within one operand (diagonals) must match exactly.
    label_size, ell_sizes = {}, [1] * ell_ndim
    for k, (labs, shape) in enumerate(zip(labels, shapes)):
        dims, pos, dim = list(shape), {}, 0
        for lab in labs:
            if lab == "...":
                covered = len(shape) - (len(labs) - 1)
                for j in range(ell_ndim - covered, ell_ndim):
                    s = dims[dim]
                    if s != 1:
                        if ell_sizes[j] not in (1, s):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {k}"
                                f"has size {s} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = s
                    dim += 1
            elif lab not in pos:
                s = dims[dim]
                if s != 1:
                    seen = label_size.get(lab, 1)
                    if seen not in (1, s):
                        raise RuntimeError(
                            f"einsum(): subscript {lab} has size {s} for operand {k} which does "
                            f"not broadcast with previously seen size {seen}")
                    label_size[lab] = s
                pos[lab] = dim
                dim += 1
            else:
                prev = pos[lab]
                if dims[dim] != dims[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {lab} is repeated for operand {k} but the sizes "
                        f"don't match, {dims[dim]} != {dims[prev]}")
                del dims[dim]


@functools.lru_cache(maxsize=1024)
def einsum_plan(equation, shapes, strategy="auto"):
    """Validate (equation, operand shapes) as PyTorch does and return the equation in the
    explicit, space-free form jnp.einsum takes. Cached: einsum sits in training loops.
    `strategy`: torch.backends.opt_einsum's, None where it is off."""
    n = len(shapes)
    if n > 2 and strategy is not None:
        # With more than two operands PyTorch first asks opt_einsum (when enabled) for a
        # contraction path, so opt_einsum's own ValueErrors come first.
        import opt_einsum
        opt_einsum.contract_path(equation, *shapes, shapes=True, optimize=strategy)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    labels = _parse_inputs(lhs, n)
    counts, ell_ndim = {}, 0
    for k, (labs, shape) in enumerate(zip(labels, shapes)):
        has_ell = "..." in labs
        nlab = len(labs) - has_ell
        for lab in labs:
            if lab != "...":
                counts[lab] = counts.get(lab, 0) + 1
        if has_ell:
            ell_ndim = max(ell_ndim, len(shape) - nlab)
            if nlab > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nlab}) "
                                   f"is more than the number of dimensions ({len(shape)}) for "
                                   f"operand {k}")
        elif nlab != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nlab}) "
                               f"does not match the number of dimensions ({len(shape)}) for "
                               f"operand {k} and no ellipsis was given")
    if arrow < 0:  # implicit output: the ellipsis, then labels seen once, A-Z before a-z
        out = (["..."] if any("..." in labs for labs in labels) else [])
        out += sorted(lab for lab, c in counts.items() if c == 1)
    else:
        out = _parse_output(equation[arrow + 2:], arrow + 2, counts)
    _check_sizes(labels, shapes, ell_ndim)
    return ",".join("".join(labs) for labs in labels) + "->" + "".join(out)


def sublist_equation(sub):
    # PyTorch numbers subscripts A-Z as 0-25 and a-z as 26-51.
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
        elif s >= 0 and s < 26:
            out.append(chr(ord("A") + s))
        elif s >= 26 and s < 52:
            out.append(chr(ord("a") + s - 26))
        else:
            raise ValueError("einsum(): subscript in subscript list is not within the valid "
                             "range [0, 52)")
    return "".join(out)
