"""torchish.utils.tensorboard: CRC-32C vectors, event files read back by a TFRecord/protobuf
reader written here, and (with real torch and the tensorboard package) the same calls through
torch's SummaryWriter decoding to the same events."""
import glob
import os
import re
import socket
import struct
import time
import zlib

import numpy as np
import pytest

import torchish
from torchish._unsupported import UnsupportedError
from torchish.utils.tensorboard import SummaryWriter
from torchish.utils.tensorboard._crc32c import crc32c, masked_crc32c

WALL = 1234.5  # explicit walltime: records become comparable byte for byte


# ---- an independent reader: bitwise CRC-32C, TFRecords, protobuf wire format, PNG --------

def _crc_bitwise(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _masked(data):
    crc = _crc_bitwise(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def read_records(path):
    data = open(path, "rb").read()
    out, i = [], 0
    while i < len(data):
        header = data[i:i + 8]
        (n,) = struct.unpack("<Q", header)
        assert struct.unpack("<I", data[i + 8:i + 12])[0] == _masked(header)
        payload = data[i + 12:i + 12 + n]
        assert struct.unpack("<I", data[i + 12 + n:i + 16 + n])[0] == _masked(payload)
        out.append(payload)
        i += 16 + n
    assert i == len(data)
    return out


def _varint(buf, i):
    shift = value = 0
    while True:
        b = buf[i]
        value |= (b & 0x7F) << shift
        i += 1
        shift += 7
        if not b & 0x80:
            return value, i


def _fields(buf):
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 1:
            value, i = buf[i:i + 8], i + 8
        elif wire == 5:
            value, i = buf[i:i + 4], i + 4
        elif wire == 2:
            n, i = _varint(buf, i)
            value, i = buf[i:i + n], i + n
        else:
            raise AssertionError(f"wire type {wire}")
        yield number, wire, value


# message -> field number -> (name, kind, repeated); written from TensorBoard's .proto files
S = {
    "Event": {1: ("wall_time", "double"), 2: ("step", "int64"), 3: ("file_version", "string"),
              5: ("summary", "Summary"), 7: ("session_log", "SessionLog"),
              10: ("source_metadata", "SourceMetadata")},
    "SessionLog": {1: ("status", "int")},
    "SourceMetadata": {1: ("writer", "string")},
    "Summary": {1: ("value", "Value", True)},
    "Value": {1: ("tag", "string"), 2: ("simple_value", "float"), 4: ("image", "Image"),
              5: ("histo", "Histo"), 6: ("audio", "Audio"), 8: ("tensor", "Tensor"),
              9: ("metadata", "Metadata")},
    "Image": {1: ("height", "int"), 2: ("width", "int"), 3: ("colorspace", "int"),
              4: ("encoded_image_string", "png")},
    "Audio": {1: ("sample_rate", "float"), 2: ("num_channels", "int"),
              3: ("length_frames", "int"), 4: ("encoded_audio_string", "bytes"),
              5: ("content_type", "string")},
    "Histo": {1: ("min", "double"), 2: ("max", "double"), 3: ("num", "double"),
              4: ("sum", "double"), 5: ("sum_squares", "double"),
              6: ("bucket_limit", "double", True), 7: ("bucket", "double", True)},
    "Metadata": {1: ("plugin_data", "PluginData")},
    "PluginData": {1: ("plugin_name", "string"), 2: ("content", "bytes")},
    "Tensor": {1: ("dtype", "int"), 2: ("tensor_shape", "Shape"), 5: ("float_val", "float", True),
               6: ("double_val", "double", True), 7: ("int_val", "sint32", True),
               8: ("string_val", "bytes", True), 9: ("scomplex_val", "float", True),
               10: ("int64_val", "sint64", True), 11: ("bool_val", "int", True),
               12: ("dcomplex_val", "double", True), 13: ("half_val", "sint32", True),
               16: ("uint32_val", "int", True)},
    "Shape": {2: ("dim", "Dim", True)},
    "Dim": {1: ("size", "int")},
}
_FIXED = {"double": ("<d", 8), "float": ("<f", 4)}


def _scalar(kind, wire, raw):
    if kind in _FIXED:
        return struct.unpack(_FIXED[kind][0], raw)[0]
    if kind == "string":
        return raw.decode("utf-8")
    if kind in ("sint32", "sint64"):  # negative ints are 64-bit two's complement varints
        return raw - (1 << 64) if raw >= 1 << 63 else raw
    return raw


def decode(buf, message="Event"):
    out = {}
    for number, wire, raw in _fields(buf):
        name, kind, *rep = S[message][number]
        if kind in S:
            value = [decode(raw, kind)]
        elif kind == "png":
            value = [decode_png(raw)]
        elif rep and wire == 2 and kind not in ("bytes", "string"):  # packed
            if kind in _FIXED:
                fmt, size = _FIXED[kind]
                value = [struct.unpack(fmt, raw[j:j + size])[0] for j in range(0, len(raw), size)]
            else:
                value, j = [], 0
                while j < len(raw):
                    v, j = _varint(raw, j)
                    value.append(_scalar(kind, 0, v))
        else:
            value = [_scalar(kind, wire, raw)]
        if rep:
            out.setdefault(name, []).extend(value)
        else:
            out[name] = value[0]
    return out


def decode_png(data):
    """(width, height, color type, pixels) of an 8-bit PNG, undoing every row filter."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    i, idat = 8, b""
    while i < len(data):
        (n,), kind = struct.unpack(">I", data[i:i + 4]), data[i + 4:i + 8]
        body = data[i + 8:i + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        i += 12 + n
    bpp = {0: 1, 4: 2, 2: 3, 6: 4}[ctype]
    raw, stride = zlib.decompress(idat), w * bpp
    prev, rows = bytearray(stride), []
    for r in range(h):
        f, line = raw[r * (stride + 1)], bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    assert depth == 8
    return (w, h, ctype, np.frombuffer(b"".join(rows), np.uint8).reshape(h, w, bpp).tolist())


def event_files(logdir):
    # in creation order: the name ends with a per-process counter (then any suffix)
    paths = glob.glob(os.path.join(str(logdir), "**", "events.out.tfevents.*"), recursive=True)
    return sorted(paths, key=lambda p: int(re.search(rf"\.{os.getpid()}\.(\d+)", p).group(1)))


def events(logdir):
    """{run sub-directory: [decoded events]} for every event file under logdir."""
    out = {}
    for path in event_files(logdir):
        run = os.path.relpath(os.path.dirname(path), str(logdir))
        out.setdefault(run, []).extend(decode(r) for r in read_records(path))
    return out


def values(logdir, run="."):
    """(step, Summary.Value) pairs of one run."""
    return [(e.get("step", 0), v) for e in events(logdir)[run] if "summary" in e
            for v in e["summary"]["value"]]


# ---- CRC-32C ------------------------------------------------------------------------------

@pytest.mark.parametrize("data,expected", [
    (bytes(32), 0x8A9136AA),                     # RFC 3720 B.4
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
    (bytes.fromhex("01c00000000000000000000000000000" "14000000000004000000001400000018"
                   "28000000000000000200000000000000"), 0xD9963A56),  # an iSCSI read PDU
    (b"123456789", 0xE3069283),
    (b"", 0),
])
def test_crc32c_known_answers(data, expected):
    assert crc32c(data) == expected


def test_crc32c_matches_bitwise_at_every_length_and_continues():
    rng = np.random.default_rng(0)
    data = rng.integers(0, 256, 300, dtype=np.uint8).tobytes()
    for n in (1, 7, 8, 9, 15, 16, 17, 63, 300):
        assert crc32c(data[:n]) == _crc_bitwise(data[:n])
        assert masked_crc32c(data[:n]) == _masked(data[:n])
    assert crc32c(data[100:], crc32c(data[:100])) == crc32c(data)


def test_masked_crc_matches_tensorboard():
    pytest.importorskip("tensorboard")
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c as ref
    for n in (0, 5, 8, 33, 1000):
        data = bytes((i * 37 + n) % 256 for i in range(n))
        assert masked_crc32c(data) == ref(data)


# ---- what gets written, read back ---------------------------------------------------------

def test_file_name_first_record_and_logdir(tmp_path):
    with SummaryWriter(tmp_path / "run", filename_suffix=".x") as w:
        assert w.get_logdir() == tmp_path / "run"
    (path,) = event_files(tmp_path)
    host, pid = re.escape(socket.gethostname()), os.getpid()
    assert re.fullmatch(rf"events\.out\.tfevents\.\d{{10}}\.{host}\.{pid}\.\d+\.x",
                        os.path.basename(path))
    (first,) = events(tmp_path)["run"]
    assert first["file_version"] == "brain.Event:2"
    assert abs(first["wall_time"] - time.time()) < 60
    assert first["source_metadata"] == {"writer": "tensorboard.summary.writer.event_file_writer"}


def test_default_logdir_under_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    w.close()
    host = re.escape(socket.gethostname())
    assert re.fullmatch(rf"runs/[A-Z][a-z]{{2}}\d\d_\d\d-\d\d-\d\d_{host}_lr0\.1", w.get_logdir())
    assert len(event_files(tmp_path / w.get_logdir())) == 1


def test_scalars_from_tensors_arrays_and_numbers(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalar("loss", torchish.tensor(0.5), 0, walltime=WALL)
        w.add_scalar("loss", np.float64(0.25), 1)
        w.add_scalar("loss", np.array([[3]]), 2)
        w.add_scalar("loss", 7, torchish.tensor(3))
        w.add_scalar("new", 1 / 3, 4, new_style=True)
        w.add_scalar("dbl", 1 / 3, 5, new_style=True, double_precision=True)
    got = values(tmp_path)
    assert [(s, v["tag"], v["simple_value"]) for s, v in got[:4]] == [
        (0, "loss", 0.5), (1, "loss", 0.25), (2, "loss", 3.0), (3, "loss", 7.0)]
    assert events(tmp_path)["."][1]["wall_time"] == WALL
    (_, new), (_, dbl) = got[4:]
    assert new["tensor"] == {"dtype": 1, "float_val": [pytest.approx(1 / 3, rel=1e-7)]}
    assert new["metadata"] == {"plugin_data": {"plugin_name": "scalars"}}
    assert dbl["tensor"] == {"dtype": 2, "double_val": [1 / 3]}


def test_add_scalars_writes_one_run_per_key(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_scalars("a/b", {"x": 1.0, "y": 2.0}, 3)
        w.add_scalars("a/b", {"x": 4.0}, 4)
    runs = events(tmp_path)
    assert sorted(runs) == [".", "a_b_x", "a_b_y"]
    assert [(s, v["tag"], v["simple_value"]) for s, v in values(tmp_path, "a_b_x")] == [
        (3, "a/b", 1.0), (4, "a/b", 4.0)]
    assert [v["simple_value"] for _, v in values(tmp_path, "a_b_y")] == [2.0]


def test_histogram_buckets(tmp_path):
    data = np.array([0.5, 1.5, 1.7, 3.2])
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("h", data, 1, bins=[0, 1, 2, 3, 4, 5])
        w.add_histogram("tf", torchish.tensor([1.0, 1.0, 2.0]), 2)
    (_, h), (_, tf) = values(tmp_path)
    h = h["histo"]
    # the empty bucket left of the first non-empty one carries the left edge
    assert h["bucket_limit"] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert h["bucket"] == [0.0, 1.0, 2.0, 0.0, 1.0]
    assert (h["min"], h["max"], h["num"]) == (0.5, 3.2, 4.0)
    assert h["sum"] == pytest.approx(6.9) and h["sum_squares"] == pytest.approx(data @ data)
    assert sum(tf["histo"]["bucket"]) == 3.0 and tf["histo"]["max"] == 2.0
    limits = tf["histo"]["bucket_limit"]
    assert all(b / a == pytest.approx(1.1) for a, b in zip(limits, limits[1:]))


def test_text_hparams_tensor_audio_images(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("note", "hello *world*", 5)
        w.add_hparams({"lr": 0.1, "opt": "adam"}, {"acc": 0.9}, run_name="trial")
        w.add_tensor("t", torchish.tensor([[1, -2], [3, 4]], dtype=torchish.int32))
        w.add_audio("snd", np.array([0.0, 0.5, -1.0]), sample_rate=8000)
        w.add_image("img", np.array([[[0.0, 1.0]], [[0.5, 0.5]], [[1.0, 0.0]]]))
        w.add_images("grid", np.ones((2, 1, 1, 1), dtype=np.uint8) * 200)
    (s, text), (_, tensor), (_, snd), (_, img), (_, grid) = values(tmp_path)
    assert (s, text["tag"], text["tensor"]["string_val"]) == (5, "note/text_summary",
                                                             [b"hello *world*"])
    assert text["tensor"]["tensor_shape"] == {"dim": [{"size": 1}]}
    assert tensor["tensor"] == {"dtype": 3, "int_val": [1, -2, 3, 4],
                                "tensor_shape": {"dim": [{"size": 2}, {"size": 2}]}}
    assert snd["audio"]["sample_rate"] == 8000 and snd["audio"]["length_frames"] == 3
    assert snd["audio"]["encoded_audio_string"][:4] == b"RIFF"
    assert img["image"]["encoded_image_string"] == (
        2, 1, 2, [[[0, 127, 255], [255, 127, 0]]])
    assert grid["image"]["encoded_image_string"][3] == [[[200] * 3, [200] * 3]]
    hp = values(tmp_path, "trial")
    assert [v["tag"] for _, v in hp] == ["_hparams_/experiment", "_hparams_/session_start_info",
                                         "_hparams_/session_end_info", "acc"]
    assert hp[3][1]["simple_value"] == pytest.approx(0.9)
    # HParamsPluginData: field 3 is session_start_info, holding one map entry per hparam
    content = hp[1][1]["metadata"]["plugin_data"]["content"]
    ((number, _, ssi),) = _fields(content)
    assert number == 3 and len(list(_fields(ssi))) == 2


def test_purge_step_close_reopen_and_flush(tmp_path):
    w = SummaryWriter(tmp_path, purge_step=7)
    w.add_scalar("a", 1.0, 8)
    w.close()
    w.close()
    w.flush()
    w.add_scalar("a", 2.0, 9)  # a closed writer starts a new file
    w.close()
    assert len(event_files(tmp_path)) == 2
    first = read_records(event_files(tmp_path)[0])
    evs = [decode(r) for r in first]
    assert (evs[1]["step"], evs[1]["file_version"]) == (7, "brain.Event:2")
    assert (evs[2]["step"], evs[2]["session_log"]) == (7, {"status": 1})


def test_queue_and_timer_flushes(tmp_path):
    w = SummaryWriter(tmp_path / "q", max_queue=2, flush_secs=1000)
    w.add_scalar("a", 1.0, 0)
    assert len(read_records(event_files(tmp_path / "q")[0])) == 1  # still queued
    w.add_scalar("a", 2.0, 1)
    assert len(read_records(event_files(tmp_path / "q")[0])) == 3
    w.close()
    w = SummaryWriter(tmp_path / "t", flush_secs=0.05)
    w.add_scalar("a", 1.0, 0)
    deadline = time.time() + 5
    while len(read_records(event_files(tmp_path / "t")[0])) < 2 and time.time() < deadline:
        time.sleep(0.02)
    assert len(read_records(event_files(tmp_path / "t")[0])) == 2
    w.close()


def test_unsupported_methods_say_so(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for call in (lambda: w.add_graph(torchish.nn.Linear(2, 2), torchish.zeros(1, 2)),
                     lambda: w.add_video("v", torchish.zeros(1, 2, 3, 4, 4)),
                     lambda: w.add_embedding(torchish.zeros(3, 2)),
                     lambda: w.add_mesh("m", torchish.zeros(1, 3, 3))):
            with pytest.raises(UnsupportedError, match="is not supported by torchish"):
                call()


def test_import_is_lazy_and_aliased(tmp_path):
    import subprocess
    import sys
    code = ("import sys, torchish; print('torchish.utils.tensorboard' in sys.modules); "
            "print(torchish.utils.tensorboard.SummaryWriter.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["False", "SummaryWriter"]
    script = tmp_path / "s.py"
    script.write_text("from torch.utils.tensorboard import SummaryWriter\n"
                      "import torchish.utils.tensorboard as ours\n"
                      "print(SummaryWriter is ours.SummaryWriter, SummaryWriter.__module__)\n")
    out = subprocess.run([sys.executable, "-m", "torchish", str(script)], capture_output=True,
                         text=True)
    # torchish's class, under PyTorch's module name (as `python -m torchish` presents it)
    assert out.stdout.split() == ["True", "torch.utils.tensorboard.writer"]


# ---- differential against torch.utils.tensorboard -----------------------------------------

def _real():
    torch = pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    return torch, TorchWriter


def _normalized(logdir):
    out = {}
    for run, evs in events(logdir).items():
        run = "hparams" if run.count(os.sep) == 0 and run[:1].isdigit() else run
        norm = []
        for e in evs:
            e = dict(e)
            if e["wall_time"] not in (WALL, WALL + 1):  # stamped with the current time
                assert abs(e.pop("wall_time") - time.time()) < 600
            norm.append(e)
        out[run] = norm
    return out


def _hparams_content(logdir, run):
    """The SessionStartInfo map entries, which protobuf writes in no fixed order."""
    _, start = values(logdir, run)[1]
    content = start["metadata"]["plugin_data"]["content"]
    (_, _, ssi), = [f for f in _fields(content) if f[0] == 3]
    return sorted(raw for number, _, raw in _fields(ssi))


def _log_everything(w, lib):
    rng = np.random.default_rng(1)
    arr = rng.standard_normal(200)
    w.add_scalar("s", 1.25, 0, walltime=WALL)
    w.add_scalar("s", lib.tensor(2.5), np.int64(1), walltime=WALL)
    w.add_scalar("s", np.float32(1e-3), 2, walltime=WALL + 1)
    w.add_scalar("big", 1e300, 3, walltime=WALL)
    w.add_scalar("n", 1 / 3, 1, walltime=WALL, new_style=True)
    w.add_scalar("n", -0.0, 2, walltime=WALL, new_style=True, double_precision=True)
    w.add_scalars("grp/x", {"a": 1, "b": lib.tensor(2.0)}, 5, walltime=WALL)
    w.add_histogram("h", lib.tensor(arr.astype(np.float32)), 2, walltime=WALL)
    w.add_histogram("h_bf16", lib.tensor(arr).to(lib.bfloat16), 2, walltime=WALL)
    w.add_histogram("h_auto", arr, 2, bins="auto", walltime=WALL)
    w.add_histogram("h_fd", arr * 1e3, 2, bins="fd", walltime=WALL, max_bins=7)
    w.add_histogram("h_int", np.arange(10), 2, bins=4, walltime=WALL)
    w.add_histogram("h_const", np.zeros(5), 2, walltime=WALL)
    w.add_histogram_raw("raw", 0, 3, 5, 6, 10, [1, 2, 3], [1, 3, 1], 3, walltime=WALL)
    w.add_text("t", "héllo **md**", 3, walltime=WALL)
    w.add_tensor("ti", lib.tensor([[1, -2], [3, 4]]), walltime=WALL)
    w.add_tensor("tf", lib.tensor([1.5, -2.25]), walltime=WALL)
    w.add_tensor("th", lib.tensor([1.5, -2.0], dtype=lib.float16), walltime=WALL)
    w.add_tensor("tu", lib.tensor([0, 255], dtype=lib.uint8), walltime=WALL)
    w.add_tensor("tb", lib.tensor([True, False]), walltime=WALL)
    w.add_tensor("tc", lib.tensor([1 + 2j]), walltime=WALL)
    w.add_audio("au", lib.tensor(np.linspace(-1, 1, 64)), 0, walltime=WALL)
    w.add_audio("au2", np.linspace(-2, 2, 10)[None], 0, sample_rate=100, walltime=WALL)
    img = rng.random((3, 5, 7))
    w.add_image("img", lib.tensor(img), 0, walltime=WALL)
    w.add_image("img_hwc", (img.transpose(1, 2, 0) * 255).astype(np.uint8), 0, walltime=WALL,
                dataformats="HWC")
    w.add_image("img_hw", img[0] * 1.5 - 0.2, 0, walltime=WALL, dataformats="HW")
    w.add_image("img_1", img[:1], 0, walltime=WALL)
    w.add_image("img_rgba", rng.random((4, 3, 2)), 0, walltime=WALL)
    w.add_images("imgs", rng.random((10, 3, 4, 2)), 0, walltime=WALL)
    w.add_images("imgs_nhwc", rng.random((3, 2, 2, 1)), 0, walltime=WALL, dataformats="NHWC")
    w.add_pr_curve("pr", rng.integers(0, 2, 40), rng.random(40), 1, walltime=WALL)
    w.add_pr_curve("pr_w", np.array([0, 1, 1, 0]), np.array([.1, .9, .4, .6]), 1,
                   num_thresholds=300, weights=np.array([1, 2, 3, 4.0]), walltime=WALL)
    w.add_pr_curve_raw("prr", *[np.arange(4.0) + k for k in range(6)], 1, num_thresholds=4,
                       walltime=WALL)
    w.add_custom_scalars({"c": {"m": ["Multiline", ["s", "n"]], "g": ["Margin", ["a", "b", "c"]]}})
    w.add_custom_scalars_multilinechart(["s"], category="x", title="y")
    w.add_custom_scalars_marginchart(["a", "b", "c"])
    w.add_hparams({"lr": 0.1, "flag": True, "opt": "adam", "none": None, "k": 3,
                   "t": lib.tensor([0.5])}, {"acc": 0.75},
                  hparam_domain_discrete={"opt": ["adam", "sgd"], "k": [1, 3]},
                  run_name="hp", global_step=4)


def test_same_events_as_torch(tmp_path):
    torch, TorchWriter = _real()
    with TorchWriter(tmp_path / "torch", purge_step=2) as w:
        _log_everything(w, torch)
    with SummaryWriter(tmp_path / "ours", purge_step=2) as w:
        _log_everything(w, torchish)
    theirs, ours = _normalized(tmp_path / "torch"), _normalized(tmp_path / "ours")
    assert sorted(ours) == sorted(theirs)
    for run in theirs:
        t_events, o_events = theirs[run], ours[run]
        assert len(o_events) == len(t_events), run
        for t, o in zip(t_events, o_events):
            if run == "hp" and "_hparams_/session_start_info" in str(t):
                continue  # map entries in hash order: compared below
            assert o == t, (run, o, t)
    assert _hparams_content(tmp_path / "ours", "hp") == _hparams_content(tmp_path / "torch", "hp")


def test_scalar_records_are_byte_identical(tmp_path):
    torch, TorchWriter = _real()
    for lib, Writer, name in ((torch, TorchWriter, "t"), (torchish, SummaryWriter, "o")):
        with Writer(tmp_path / name) as w:
            w.add_scalar("x", 0.1, 3, walltime=WALL)
            w.add_scalar("x", 0.0, 0, walltime=WALL)
            w.add_histogram("h", np.array([1.0, 2.0, 2.5]), 7, walltime=WALL)
            w.add_text("t", "abc", walltime=WALL)
    ours = read_records(event_files(tmp_path / "o")[0])[1:]
    theirs = read_records(event_files(tmp_path / "t")[0])[1:]
    assert ours == theirs


def _error(fn):
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the type and message are what is compared
        return type(exc), str(exc)
    return None


@pytest.mark.parametrize("call", [
    lambda w, lib: w.add_scalar("x", lib.tensor([1.0, 2.0])),
    lambda w, lib: w.add_scalar("x", [1.0]),
    lambda w, lib: w.add_histogram("h", np.array([])),
    lambda w, lib: w.add_histogram_raw("r", 0, 1, 1, 1, 1, [1, 2], [1]),
    lambda w, lib: w.add_image("i", np.zeros((3, 4)), dataformats="CHW"),
    lambda w, lib: w.add_image("i", np.zeros((3, 4, 4)), dataformats="CCW"),
    lambda w, lib: w.add_images("i", np.zeros((2, 2, 4, 4))),
    lambda w, lib: w.add_audio("a", np.zeros((2, 4))),
    lambda w, lib: w.add_hparams([], {}),
    lambda w, lib: w.add_hparams({"a": [1]}, {}),
    lambda w, lib: w.add_hparams({"a": 1}, {}, hparam_domain_discrete={"a": ["x"]}),
    lambda w, lib: w.add_custom_scalars_marginchart(["a"]),
    lambda w, lib: w.add_histogram("h", np.array([1.0, np.nan]), bins="auto"),
], ids=["scalar_shape", "scalar_list", "hist_empty", "hist_raw_len", "hwc_size", "hwc_dup",
        "grid_channels", "audio_2d", "hparams_type", "hparams_value", "hparams_domain",
        "margin_tags", "hist_nan"])
def test_errors_match_torch(tmp_path, call):
    torch, TorchWriter = _real()
    with TorchWriter(tmp_path / "t") as tw, SummaryWriter(tmp_path / "o") as ow:
        ours, theirs = _error(lambda: call(ow, torchish)), _error(lambda: call(tw, torch))
        assert theirs is not None and ours == theirs
