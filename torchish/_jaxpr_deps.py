"""Which inputs of a jaxpr its outputs depend on (a backward walk over the equations).

Used to give autograd edges only to tensors a traced computation really depends on, as
PyTorch's graph has: a parameter the result does not depend on keeps `.grad` None.
"""


def _inner(eqn):
    """The sub-jaxpr of a call-like equation whose inputs/outputs match the equation's own."""
    for name in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        sub = eqn.params.get(name)
        sub = getattr(sub, "jaxpr", sub)    # a ClosedJaxpr holds its Jaxpr
        if (sub is not None and hasattr(sub, "eqns") and len(sub.invars) == len(eqn.invars)
                and len(sub.outvars) == len(eqn.outvars)):
            return sub
    return None


def needed_inputs(jaxpr, needed_outputs=None):
    """Per input variable of `jaxpr` (a Jaxpr or ClosedJaxpr): whether any output flagged in
    `needed_outputs` (default: all) depends on it. Call-like equations (jit, custom_jvp/vjp
    calls, remat) are looked into; any other equation counts every input for every output."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    if needed_outputs is None:
        needed_outputs = [True] * len(jaxpr.outvars)
    needed = {id(v) for v, n in zip(jaxpr.outvars, needed_outputs) if n}
    for eqn in reversed(jaxpr.eqns):
        flags = [id(v) in needed for v in eqn.outvars]
        if not any(flags):
            continue
        sub = _inner(eqn)
        if sub is not None:
            uses = needed_inputs(sub, flags)
            needed.update(id(v) for v, u in zip(eqn.invars, uses) if u)
        else:
            needed.update(id(v) for v in eqn.invars)
    return [id(v) in needed for v in jaxpr.invars]
