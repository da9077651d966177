"""torch.frombuffer, differential against PyTorch: values, dtypes, count/offset and the
errors. (torchish copies the bytes: writes to the tensor do not reach the buffer.)"""
import array

import pytest

import torchish

torch = pytest.importorskip("torch")


def _results(T):
    b = bytearray(b"\x01\x02\x03\x04\x05\x06\x07\x08")
    f = T.frombuffer
    calls = [lambda: f(b, dtype=T.uint8), lambda: f(b, dtype=T.int16, count=2, offset=2),
             lambda: f(array.array("f", [1.5, 2.5]), dtype=T.float32),
             lambda: f(memoryview(b)[2:], dtype=T.uint8),
             lambda: f(b, dtype=T.float32, requires_grad=True),
             lambda: f(b, dtype=T.int32, offset=3), lambda: f(b, dtype=T.int32, count=3),
             lambda: f(bytearray(), dtype=T.uint8), lambda: f(b, dtype=T.uint8, offset=8),
             lambda: f([1, 2], dtype=T.uint8), lambda: f(b, dtype=T.uint8, count=0),
             lambda: f(b, dtype=T.int16, offset=-1), lambda: f(b)]
    out = []
    for call in calls:
        try:
            t = call()
            out.append((t.tolist(), str(t.dtype), t.requires_grad, t.is_leaf))
        except (ValueError, TypeError) as e:
            out.append((type(e).__name__, str(e)))
    return out


def test_frombuffer_as_pytorch():
    assert _results(torchish) == _results(torch)
