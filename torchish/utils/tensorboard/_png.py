"""PNG encoding of uint8 images with zlib and struct only (TensorBoard's images are PNGs)."""
import struct
import zlib

import numpy as np

# channels -> PNG colour type: grey, grey+alpha, RGB, RGBA
_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}


def _chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def encode_png(image):
    """PNG bytes of an (H, W, C) or (H, W) uint8 array, C in 1..4, 8 bits per sample."""
    image = np.ascontiguousarray(image, dtype=np.uint8)
    if image.ndim == 2:
        image = image[:, :, None]
    height, width, channels = image.shape
    if channels not in _COLOR_TYPE:
        raise ValueError(f"cannot write an image with {channels} channels as PNG")
    # every scanline starts with its filter type; 0 (none) keeps encoding a single zlib call
    rows = np.zeros((height, 1 + width * channels), dtype=np.uint8)
    rows[:, 1:] = image.reshape(height, width * channels)
    header = struct.pack(">IIBBBBB", width, height, 8, _COLOR_TYPE[channels], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + _chunk(b"IEND", b""))
