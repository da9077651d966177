"""CRC-32C (Castagnoli), the checksum TFRecord framing uses, in plain Python.

Table-driven "slicing by 8": eight 256-entry tables let the loop consume eight bytes per
iteration, which keeps pure Python fast enough for event logging (images included).
"""
import struct

_POLY = 0x82F63B78  # reflected Castagnoli polynomial


def _make_tables():
    first = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        first.append(c)
    tables = [first]
    for _ in range(7):
        prev = tables[-1]
        tables.append([(prev[n] >> 8) ^ first[prev[n] & 0xFF] for n in range(256)])
    return [tuple(t) for t in tables]


_T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7 = _make_tables()
_MASK_DELTA = 0xA282EAD8


def crc32c(data, crc=0):
    """CRC-32C of `data` (bytes-like), continuing from a previous `crc`."""
    data = bytes(data)
    crc ^= 0xFFFFFFFF
    n8 = len(data) // 8
    t0, t1, t2, t3, t4, t5, t6, t7 = _T0, _T1, _T2, _T3, _T4, _T5, _T6, _T7
    for lo, hi in struct.iter_unpack("<II", data[:n8 * 8]):
        lo ^= crc
        crc = (t7[lo & 0xFF] ^ t6[(lo >> 8) & 0xFF] ^ t5[(lo >> 16) & 0xFF] ^ t4[lo >> 24]
               ^ t3[hi & 0xFF] ^ t2[(hi >> 8) & 0xFF] ^ t1[(hi >> 16) & 0xFF] ^ t0[hi >> 24])
    for b in data[n8 * 8:]:
        crc = (crc >> 8) ^ t0[(crc ^ b) & 0xFF]
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """TFRecord's masked CRC: rotate right by 15 bits and add a constant, so that a CRC
    stored inside data that is itself checksummed does not cancel out."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF
