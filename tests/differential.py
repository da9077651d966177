"""Differential-test helpers: run the same code under real PyTorch and torchish and compare
what comes out, results or errors (type and message)."""
import warnings

import pytest


def raises_same(ours, theirs):
    """Call `theirs` (PyTorch) then `ours` (torchish): both must raise, the same type with the
    same message. Warnings on the way are not the subject: ignored."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as expected:
            theirs()
        with pytest.raises(type(expected.value)) as got:
            ours()
    assert str(got.value) == str(expected.value)
    return got.value


def outcome(f):
    """f()'s result, or the error it raised as (type name, message)."""
    try:
        return f()
    except Exception as e:   # compared across the two libraries: type and message
        return (type(e).__name__, str(e))


def same_printed(run, torch, error=None, text=str, first_paragraph=False):
    """`run(T)` under PyTorch and torchish (warnings ignored) prints the same, result or error
    (each library's own objects: compared as text). `error`: whether PyTorch must raise (None:
    either); `text`: a result as text; `first_paragraph`: an error's message up to its first
    blank line (after it PyTorch's dispatcher lists where its kernels were registered).
    Returns that text."""
    import torchish
    got, raised = [], []
    for T in (torch, torchish):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                got.append(text(run(T)))
                raised.append(False)
            except Exception as e:   # compared across the two libraries: type and message
                message = str(e).split("\n\n")[0] if first_paragraph else str(e)
                got.append(str((type(e).__name__, message)))
                raised.append(True)
    if error is not None:
        assert raised[0] == error, got[0]
    assert (raised[1], got[1]) == (raised[0], got[0]), f"torch: {got[0]}\nours: {got[1]}"
    return got[0]


def first_edge_chain(node):
    """Names of `node` and the nodes reached from it along first edges (a graph's spine)."""
    names = []
    while node is not None:
        names.append(node.name())
        node = node.next_functions[0][0] if node.next_functions else None
    return names
