"""`torchish.quasirandom`: SobolEngine, (scrambled) Sobol' sequences equal to PyTorch's.

PyTorch's engine keeps its state as CPU int64 tensors (`sobolstate`: the direction numbers,
`shift`, `quasi`: the last point as 30-bit integers) and advances it one point at a time in
C++. Here the same state is advanced for a whole batch at once with torchish ops: the point
after k steps is `shift ^ XOR(V[b] for the set bits b of gray(k))` (the Gray-code form of
the Antonov-Saleev recurrence), one XOR pass per bit of the largest counter.

The direction numbers are Joe & Kuo's new-joe-kuo-6.21201 table, as PyTorch's, stored in
`_sobol_direction_numbers.npz` (written by tools/make_sobol_table.py).
"""
import os

import numpy as np

import torchish as torch

__all__ = ["SobolEngine"]

_MAXBIT = 30
_TABLE = None


def _direction_numbers():
    """The (21201, 30) int64 table of direction numbers, unscrambled, built once."""
    global _TABLE
    if _TABLE is not None:
        return _TABLE
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "_sobol_direction_numbers.npz")
    with np.load(path) as data:
        poly = np.cumsum(data["poly_delta"].astype(np.int64))
        bits = np.unpackbits(data["vinit_bits"])
    ndim = poly.shape[0]
    degree = np.floor(np.log2(poly)).astype(np.int64)   # exact: poly < 2**19
    v = np.zeros((ndim, _MAXBIT), dtype=np.int64)
    v[:, 0] = 1
    pos = 0
    for i in range(1, degree.max()):
        rows = degree > i
        count = int(rows.sum())
        chunk = bits[pos:pos + count * i].reshape(count, i).astype(np.int64)
        pos += count * i
        v[rows, i] = 1 + (chunk << (1 + np.arange(i))).sum(1)
    v[0, :] = 1
    # the recurrence m_j = m_{j-s} ^ (2**s m_{j-s}) ^ XOR_k (2**k a_k m_{j-k}), for all
    # dimensions at once; column j of a dimension of degree s <= j is computed
    for j in range(1, _MAXBIT):
        todo = degree <= j
        todo[0] = False
        s = degree[todo]
        p = poly[todo]
        block = v[todo]
        newv = block[np.arange(block.shape[0]), j - s]
        for k in range(int(s.max()) if s.size else 0):
            use = (k < s) & (((p >> np.maximum(s - 1 - k, 0)) & 1) == 1)
            newv = newv ^ np.where(use, block[:, max(j - k - 1, 0)] << (k + 1), 0)
        v[todo, j] = newv
    v = v << (_MAXBIT - 1 - np.arange(_MAXBIT))
    _TABLE = v
    return v


def _advance(quasi, n, sobolstate, num_generated):
    """The n points following `quasi` when `num_generated` steps were taken: (n, dim) int32.

    Step c XORs in the direction number of the lowest zero bit of c, so after the steps
    num_generated .. num_generated + i, quasi has changed by G(num_generated) ^ G(k), where
    G(c) is the XOR of the direction numbers of the set bits of gray(c). The counters are
    known on the host, so their bits are constants; every pass has the same shape (one
    compiled kernel per shape, whatever the bit). Values stay below 2**30: int32 holds them."""
    counters = np.arange(num_generated, num_generated + n + 1, dtype=np.int64)
    gray = counters ^ (counters >> 1)
    v = sobolstate.to(torch.int32).t()                        # (MAXBIT, dim)
    g = torch.zeros(n + 1, sobolstate.shape[0], dtype=torch.int32, device=sobolstate.device)
    for b in range(min(int(gray.max()).bit_length(), _MAXBIT)):
        bit = ((gray >> b) & 1).astype(np.int32)
        if bit.any():
            g = g ^ (torch.from_numpy(bit[:, None]) * v[b])
    return quasi.to(torch.int32) ^ g[0] ^ g[1:]


class SobolEngine:
    r"""An engine for (scrambled) Sobol' sequences of up to 21201 dimensions, with the
    Joe & Kuo direction numbers (search criterion D(6)), matching PyTorch's.

    Args:
        dimension (Int): the dimensionality of the sequence to be drawn
        scramble (bool, optional): draw scrambled (Owen) Sobol' sequences. Default: ``False``.
        seed (Int, optional): the seed of the scrambling; without it, the default generator
            draws the scrambling. Default: ``None``
    """

    MAXBIT = _MAXBIT
    MAXDIM = 21201

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality "
                             f"for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        cpu = torch.device("cpu")
        self.sobolstate = torch.tensor(_direction_numbers()[:dimension], dtype=torch.long,
                                       device=cpu)
        if not self.scramble:
            self.shift = torch.zeros(self.dimension, device=cpu, dtype=torch.long)
        else:
            self._scramble()
        self.quasi = self.shift.clone(memory_format=torch.contiguous_format)
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _draw_ints(self, n, num_generated, dtype):
        if dtype not in (torch.float32, torch.float64):
            # PyTorch's kernel is instantiated for these two only
            raise NotImplementedError(
                f"\"_sobol_engine_draw\" not implemented for '{dtype._legacy}'")
        points = _advance(self.quasi, n, self.sobolstate, num_generated)
        if n > 0:
            self.quasi = points[-1].to(torch.long)
        return points

    def draw(self, n=1, out=None, dtype=None):
        r"""Draw the next :attr:`n` points of the sequence, a tensor of size (n, dimension)."""
        if dtype is None:
            dtype = torch.get_default_dtype()
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                rest = self._draw_ints(n - 1, 0, dtype).to(dtype) * (1.0 / 2 ** self.MAXBIT)
                result = torch.cat((self._first_point.to(dtype), rest), dim=-2)
        else:
            result = self._draw_ints(n, self.num_generated - 1, dtype).to(dtype) \
                * (1.0 / 2 ** self.MAXBIT)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        r"""Draw the next :math:`2^m` points; the total drawn must stay a power of 2."""
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError("The balance properties of Sobol' points require "
                             f"n to be a power of 2. {self.num_generated} points have been "
                             f"previously generated, then: n={self.num_generated}+2**{m}="
                             f"{total_n}. If you still want to do this, please use "
                             "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        r"""Return the engine to its base state."""
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        r"""Advance the state by :attr:`n` points, as drawing them would."""
        steps, start = (n - 1, 0) if self.num_generated == 0 else (n, self.num_generated - 1)
        if steps > 0:
            self.quasi.copy_(_advance(self.quasi, steps, self.sobolstate, start)[-1])
        self.num_generated += n
        return self

    def _scramble(self):
        g = None
        if self.seed is not None:
            g = torch.Generator()
            g.manual_seed(self.seed)
        cpu = torch.device("cpu")
        # the random digital shift, then one random lower-triangular binary matrix per
        # dimension, drawn in PyTorch's order so that a seed gives PyTorch's sequence
        shift_ints = torch.randint(2, (self.dimension, self.MAXBIT), device=cpu, generator=g)
        self.shift = torch.mv(shift_ints, torch.pow(2, torch.arange(0, self.MAXBIT, device=cpu)))
        ltm = torch.randint(2, (self.dimension, self.MAXBIT, self.MAXBIT), device=cpu,
                            generator=g).tril()
        # linear matrix scrambling over GF(2): with bit i of a direction number as entry
        # MAXBIT-1-i of a vector (most significant first), the scrambled number is the
        # product of the unit-diagonal matrix and that vector, mod 2
        ltm = ltm.tril(-1) + torch.eye(self.MAXBIT, dtype=torch.long, device=cpu)
        weights = torch.pow(2, torch.arange(self.MAXBIT - 1, -1, -1, device=cpu))
        vbits = (self.sobolstate.unsqueeze(-1) // weights) % 2          # (dim, j, c)
        scrambled = torch.matmul(vbits, ltm.transpose(1, 2)) % 2        # (dim, j, p)
        self.sobolstate = (scrambled * weights).sum(-1)

    def __repr__(self):
        parts = [f"dimension={self.dimension}"]
        parts += ["scramble=True"] if self.scramble else []
        parts += [f"seed={self.seed}"] if self.seed is not None else []
        return f"{type(self).__name__}({', '.join(parts)})"
