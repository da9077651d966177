"""`torchish.autograd.functional`: jacobian, hessian, vjp, jvp, hvp, vhp.

Written, as PyTorch's are, on `autograd.grad`: the function runs once on fresh copies of the
inputs that require grad, and every product is one more backward pass through that graph
(`jvp` and `hvp` use the double-backward trick: the backward is linear in its grad_outputs, so
differentiating it with respect to them gives the forward-mode product). This is what gives the
results PyTorch's observable semantics: constants unless `create_graph=True`, inputs that do not
require grad still differentiable under `create_graph`, PyTorch's `strict` checks and errors.
Only the `vectorize=True` Jacobians/Hessians go through `torchish.func` (one batched transform
instead of one backward per output element), as PyTorch's go through vmap.
"""
from .grad_mode import enable_grad, set_grad_enabled, is_grad_enabled


def _torch():
    import torchish
    return torchish


def _as_tuple(inp, arg_name, fn_name):
    """(whether `inp` was a tuple, `inp` as a tuple of Tensors) with PyTorch's TypeErrors."""
    from .._tensor import Tensor
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(el)}.")
    return is_tuple, items


def _unpack(res, to_unpack):
    """Undo `_as_tuple` on a result: one flag, or (outputs, inputs) flags for nested tuples."""
    if isinstance(to_unpack, tuple):
        outs_tuple, ins_tuple = to_unpack
        if not ins_tuple:
            res = tuple(el[0] for el in res)
        return res if outs_tuple else res[0]
    return res if to_unpack else res[0]


def _preprocess(inputs, create_graph, need_graph):
    # Always a new Tensor object: PyTorch differentiates with respect to these, so that a tensor
    # the function captures by closure is not mistaken for the argument (pytorch#32576).
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(bool(need_graph)) for t in inputs)


def _postprocess(res, create_graph):
    from .._tensor import Tensor
    if isinstance(res[0], Tensor):
        return res if create_graph else tuple(t.detach() for t in res)
    return tuple(_postprocess(r, create_graph) for r in res)


def _as_views(res):
    """PyTorch's vectorized Jacobians end in `jac.split(...)` then `.view(shape)` per block, so
    with create_graph the blocks' grad_fn is ViewBackward0."""
    from .._tensor import Tensor
    if isinstance(res, Tensor):
        return res.view(res.shape) if res.requires_grad else res
    return tuple(_as_views(r) for r in res)


def _validate_v(v, other, other_is_tuple):
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.size() != b.size():
            where = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got "
                               f"{a.size()}.")


_STRICT_MSG = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs "
               "must be computed in a differentiable manner from the input when running in "
               "strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input. This is not allowed in strict mode. You should ensure "
               "that your function is thrice differentiable and that the hessian depends on the "
               "inputs.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the "
                   "user-provided function. This is not allowed in strict mode.",
}


def _check_requires_grad(tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT_MSG[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """`autograd.grad` that skips outputs (None or constant) that cannot carry a gradient."""
    from .engine_api import grad
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph)


# Per stage: the error when a gradient is missing in strict mode, and the error when it is a
# constant under create_graph (PyTorch's wording for each backward pass).
_MISSING = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} "
                         "in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward mode "
                         "AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i=i))
            g = _torch().zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(g)
    return tuple(res)


def _single_element_v(inputs):
    if len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    with enable_grad():
        ins_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _preprocess(inputs, create_graph, True)
        outs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                        "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            v = _preprocess(_as_tuple(v, "v", "vjp")[1], create_graph, False)
            _validate_v(v, outputs, outs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    with set_grad_enabled(bool(create_graph) or is_grad_enabled()):
        res = _fill_in_zeros(_grad(outputs, inputs, v, create_graph), inputs, strict,
                             create_graph, "back")
    return (_unpack(_postprocess(outputs, create_graph), outs_tuple),
            _unpack(_postprocess(res, create_graph), ins_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    T = _torch()
    with enable_grad():
        ins_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _preprocess(inputs, create_graph, True)
        if v is not None:
            v = _preprocess(_as_tuple(v, "v", "jvp")[1], create_graph, False)
            _validate_v(v, inputs, ins_tuple)
        else:
            _single_element_v(inputs)
        outs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                        "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # Any finite grad_outputs do: they do not appear in the double-backward graph.
        grad_outputs = tuple(T.zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(bool(create_graph) or is_grad_enabled()):
        res = _fill_in_zeros(_grad(grad_inputs, grad_outputs, v, create_graph), outputs, strict,
                             create_graph, "back_trick")
    return (_unpack(_postprocess(outputs, create_graph), outs_tuple),
            _unpack(_postprocess(res, create_graph), outs_tuple))


def _check_strategy(strategy, hint=True):
    if strategy not in ("forward-mode", "reverse-mode"):
        msg = 'Expected strategy to be either "forward-mode" or "reverse-mode".'
        if hint:
            msg += (' Hint: If your function has more outputs than inputs, "forward-mode" tends '
                    'to be more performant. Otherwise, prefer to use "reverse-mode".')
        raise AssertionError(msg)


def _vectorized(transform, func, inputs, ins_tuple):
    """(outputs are a tuple, Jacobian as a tuple over outputs of tuples over inputs)."""
    res = transform(func, argnums=tuple(range(len(inputs))))(*inputs)
    from .._tensor import Tensor
    outs_tuple = not isinstance(res[0], Tensor)
    return outs_tuple, (res if outs_tuple else (res,))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    from .. import func as F
    _check_strategy(strategy)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.')
        ins_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        if not vectorize:
            # (PyTorch's message really lacks the space between "is" and "only")
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                      "Hessian isonly implemented for `vectorize=True`.")
        inputs = tuple(t.detach() for t in inputs)
        outs_tuple, jac = _vectorized(F.jacfwd, func, inputs, ins_tuple)
        return _unpack(_postprocess(jac, False), (outs_tuple, ins_tuple))

    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    with enable_grad():
        ins_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _preprocess(inputs, create_graph, True)
        if vectorize:
            with set_grad_enabled(bool(create_graph)):
                outs_tuple, jac = _vectorized(F.jacrev, func, inputs, ins_tuple)
            if create_graph:
                jac = _as_views(jac)
            return _unpack(_postprocess(jac, create_graph), (outs_tuple, ins_tuple))
        outs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                        "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (g, inp) in enumerate(zip(vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {k}. This is not allowed "
                                               "in strict mode.")
                        g = _torch().zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is "
                                           f"independent of input {i}. This is not allowed in "
                                           "strict mode when create_graph=True.")
                    rows[k].append(g)
            jac.append(tuple(_torch().stack(r, dim=0).view(out.size() + inp.size())
                             for r, inp in zip(rows, inputs)))
        return _unpack(_postprocess(tuple(jac), create_graph), (outs_tuple, ins_tuple))


def _scalar_output(func, inputs, fn_name, strict):
    from .._tensor import Tensor
    out = func(*inputs)
    outs_tuple, outs = _as_tuple(out, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outs, "outputs", strict)
    if outs_tuple or not isinstance(out, Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if out.nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return out


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    from .. import func as F
    ins_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    _check_strategy(outer_jacobian_strategy, hint=False)

    def single(*inp):
        return _scalar_output(func, inp, "hessian", strict).squeeze()

    if vectorize and not strict and not (create_graph and outer_jacobian_strategy
                                         == "forward-mode"):
        # The inner Jacobian is a reverse transform too, so the whole Hessian is one transform.
        outer = F.jacfwd if outer_jacobian_strategy == "forward-mode" else F.jacrev
        argnums = tuple(range(len(inputs)))
        with enable_grad():
            inputs = _preprocess(inputs, create_graph, True)
            with set_grad_enabled(bool(create_graph)):
                res = outer(F.jacrev(single, argnums=argnums), argnums=argnums)(*inputs)
        if create_graph:
            res = _as_views(res)
        return _unpack(_postprocess(res, create_graph), (ins_tuple, ins_tuple))

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _unpack(res, (ins_tuple, ins_tuple))


def _second_order(func, inputs, v, create_graph, strict, fn_name):
    """Shared front of vhp/hvp: (inputs tuple?, inputs, v, output, its gradient)."""
    with enable_grad():
        ins_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
        inputs = _preprocess(inputs, create_graph, True)
        if v is not None:
            v = _preprocess(_as_tuple(v, "v", fn_name)[1], create_graph, False)
            _validate_v(v, inputs, ins_tuple)
        else:
            _single_element_v(inputs)
        out = _scalar_output(func, inputs, fn_name, strict)
        jac = _grad((out,), inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    return ins_tuple, inputs, v, out, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    ins_tuple, inputs, v, out, jac = _second_order(func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(bool(create_graph) or is_grad_enabled()):
        res = _fill_in_zeros(_grad(jac, inputs, v, create_graph), inputs, strict, create_graph,
                             "double_back")
    return (_postprocess((out,), create_graph)[0],
            _unpack(_postprocess(res, create_graph), ins_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    ins_tuple, inputs, v, out, jac = _second_order(func, inputs, v, create_graph, strict, "hvp")
    with enable_grad():
        grad_jac = tuple(_torch().zeros_like(t, requires_grad=True) for t in inputs)
        double_back = _grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(bool(create_graph) or is_grad_enabled()):
        res = _fill_in_zeros(_grad(double_back, grad_jac, v, create_graph), inputs, strict,
                             create_graph, "double_back_trick")
    return (_postprocess((out,), create_graph)[0],
            _unpack(_postprocess(res, create_graph), ins_tuple))
