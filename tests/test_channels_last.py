"""channels_last layouts against PyTorch: strides and `is_contiguous(memory_format=...)` of
what keeps a layout today (`Module.to(memory_format=...)`, clone, empty_like)."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def _layout(lib, t):
    return (tuple(t.stride()), t.is_contiguous(memory_format=lib.channels_last),
            t.is_contiguous())


def test_module_to_memory_format_converts_4d_and_5d_tensors():
    got = []
    for lib in (torch, torchish):
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Linear(2, 2))
        weight = m[0].weight
        m.to(memory_format=lib.channels_last)
        row = [m[0].weight is weight, type(m[0].weight).__name__, m[0].weight._version,
               _layout(lib, m[0].weight), tuple(m[0].bias.stride()), tuple(m[2].weight.stride())]
        m.to(lib.float64, memory_format=lib.contiguous_format)
        row += [_layout(lib, m[0].weight), str(m[0].weight.dtype)]
        m3 = lib.nn.Conv3d(2, 2, 2)
        with pytest.raises(RuntimeError) as info:
            m3.to(memory_format=lib.channels_last)
        m3.to(memory_format=lib.channels_last_3d)
        row += [str(info.value), tuple(m3.weight.stride())]
        got.append(row)
    assert got[0] == got[1]


def test_layout_kept_by_copies():
    got = []
    for lib in (torch, torchish):
        x = lib.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last)
        got.append([_layout(lib, t) for t in (x, x.clone(), lib.empty_like(x), x.contiguous(),
                                               x.sum(1))])
    assert got[0] == got[1]
