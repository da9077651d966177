"""Write torchish/_sobol_direction_numbers.npz, the Joe & Kuo (new-joe-kuo-6.21201) direction
numbers that torch.quasirandom.SobolEngine uses, taken from the copy scipy ships.

scipy is needed only to run this script, never at runtime. The table is stored compactly:
for dimension d with primitive polynomial of degree s, the initial direction numbers
m_1..m_s are odd and m_i < 2**i, so m_i >> 1 holds exactly i - 1 free bits; those bits,
column by column, go into one packed bit array. The polynomials are stored as deltas.

    python tools/make_sobol_table.py
"""
import os

import numpy as np
import scipy.stats

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "torchish", "_sobol_direction_numbers.npz")


def main():
    src = os.path.join(os.path.dirname(scipy.stats.__file__), "_sobol_direction_numbers.npz")
    table = np.load(src)
    poly = table["poly"].astype(np.int64)
    vinit = table["vinit"].astype(np.int64)
    degree = np.array([int(p).bit_length() - 1 for p in poly])
    bits = []
    for i in range(1, vinit.shape[1]):          # column 0 is always 1: no free bits
        col = vinit[degree > i, i]
        assert (col % 2 == 1).all() and (col < 2 ** (i + 1)).all()
        bits.append(((col[:, None] >> (1 + np.arange(i))) & 1).astype(np.uint8).ravel())
    packed = np.packbits(np.concatenate(bits))
    np.savez_compressed(OUT, poly_delta=np.diff(poly, prepend=0).astype(np.int32),
                        vinit_bits=packed)
    print(f"wrote {os.path.normpath(OUT)} ({os.path.getsize(OUT)} bytes)")


if __name__ == "__main__":
    main()
