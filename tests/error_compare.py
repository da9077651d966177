"""The differential check for bad input: torchish raises what PyTorch raises (the same
exception type and message)."""
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
