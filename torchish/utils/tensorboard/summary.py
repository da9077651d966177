"""Summary builders: each returns a `Summary` message (see _proto.py) ready for
`FileWriter.add_summary`, with the same tags, plugin metadata and value encodings as
torch.utils.tensorboard.summary, so TensorBoard shows both the same way."""
import io
import logging
import struct
import wave

import numpy as np

import torchish
from . import _proto as pb
from ._convert import convert_to_HWC, make_np
from ._png import encode_png

__all__ = ["hparams", "scalar", "histogram_raw", "histogram", "make_histogram", "image",
           "make_image", "audio", "custom_scalars", "text", "tensor_proto", "pr_curve_raw",
           "pr_curve", "compute_curve", "half_to_int", "int_to_half"]

logger = logging.getLogger(__name__)


def _plugin(name, content=b""):
    return pb.SummaryMetadata(plugin_data=pb.PluginData(plugin_name=name, content=content))


def _shape(*dims):
    return pb.TensorShapeProto(dim=[pb.TensorShapeDim(size=d) for d in dims])


def half_to_int(f):
    """The bits of `f` as a float32, read as an int32 (how torch fills TensorProto.half_val)."""
    return struct.unpack("i", struct.pack("f", f))[0]


def int_to_half(i):
    return struct.unpack("f", struct.pack("i", i))[0]


def scalar(name, tensor, collections=None, new_style=False, double_precision=False):
    tensor = make_np(tensor).squeeze()
    if tensor.ndim != 0:
        raise AssertionError("Tensor should contain one element (0 dimensions). " + " " * 12
                             + f"Was given size: {tensor.size} and {tensor.ndim} dimensions.")
    value = float(tensor)
    if not new_style:
        return pb.Summary(value=[pb.SummaryValue(tag=name, simple_value=value)])
    if double_precision:
        proto = pb.TensorProto(double_val=[value], dtype=pb.DT["DT_DOUBLE"])
    else:
        proto = pb.TensorProto(float_val=[value], dtype=pb.DT["DT_FLOAT"])
    return pb.Summary(value=[pb.SummaryValue(tag=name, tensor=proto,
                                             metadata=_plugin("scalars"))])


def _dtype_entry(dtype):
    """(DataType name, TensorProto field, converter) for a torchish dtype, or None."""
    t = torchish
    as_list = lambda x: x.flatten().tolist()  # noqa: E731
    as_half = lambda x: [half_to_int(v) for v in x.flatten().tolist()]  # noqa: E731
    as_complex = lambda x: t.view_as_real(x).flatten().tolist()  # noqa: E731
    return {
        t.float16: ("DT_HALF", "half_val", as_half),
        t.bfloat16: ("DT_BFLOAT16", "half_val", as_half),
        t.float32: ("DT_FLOAT", "float_val", as_list),
        t.float64: ("DT_DOUBLE", "double_val", as_list),
        t.int8: ("DT_INT8", "int_val", as_list),
        t.uint8: ("DT_UINT8", "uint32_val", as_list),
        t.int16: ("DT_INT16", "int_val", as_list),
        t.int32: ("DT_INT32", "int_val", as_list),
        t.int64: ("DT_INT64", "int64_val", as_list),
        t.complex64: ("DT_COMPLEX64", "scomplex_val", as_complex),
        t.complex128: ("DT_COMPLEX128", "dcomplex_val", as_complex),
        t.bool: ("DT_BOOL", "bool_val", as_list),
    }.get(dtype)


def tensor_proto(tag, tensor):
    if tensor.numel() * tensor.itemsize >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    entry = _dtype_entry(tensor.dtype)
    if entry is None:
        raise ValueError(f"{tag} has unsupported tensor dtype {tensor.dtype}")
    dtype, field, convert = entry
    proto = pb.TensorProto(dtype=pb.DT[dtype], tensor_shape=_shape(*tensor.shape),
                           **{field: convert(tensor.detach())})
    return pb.Summary(value=[pb.SummaryValue(tag=tag, metadata=_plugin("tensor"),
                                             tensor=proto)])


def histogram_raw(name, min, max, num, sum, sum_squares, bucket_limits, bucket_counts):
    hist = pb.HistogramProto(min=min, max=max, num=num, sum=sum, sum_squares=sum_squares,
                             bucket_limit=list(bucket_limits), bucket=list(bucket_counts))
    return pb.Summary(value=[pb.SummaryValue(tag=name, histo=hist)])


def histogram(name, values, bins, max_bins=None):
    values = make_np(values)
    hist = make_histogram(values.astype(float), bins, max_bins)
    return pb.Summary(value=[pb.SummaryValue(tag=name, histo=hist)])


def make_histogram(values, bins, max_bins=None):
    """A HistogramProto of `values` binned by np.histogram(values, bins), trimmed to the
    buckets between the first and last non-empty one (plus an empty one on the left, since
    TensorBoard buckets only carry their right edge)."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        # merge groups of `step` neighbouring bins, zero-padding the last group
        step = len(counts) // max_bins
        if len(counts) % step:
            counts = np.pad(counts, [[0, step - len(counts) % step]])
        counts = counts.reshape(-1, step).sum(axis=-1)
        limits = np.concatenate([limits[:-1:step], limits[-1:]])
    nonzero = np.flatnonzero(counts)
    if nonzero.size:
        start, end = int(nonzero[0]), int(nonzero[-1]) + 1
    else:  # where torch's searchsorted lands when every bucket is empty
        start, end = len(counts), 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return pb.HistogramProto(min=values.min(), max=values.max(), num=len(values),
                             sum=values.sum(), sum_squares=values.dot(values),
                             bucket_limit=limits.tolist(), bucket=counts.tolist())


def _to_uint8(tensor):
    # uint8 is taken as 0..255, anything else as 0..1
    scale = 1 if tensor.dtype == np.uint8 else 255
    return (tensor.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def image(tag, tensor, rescale=1, dataformats="NCHW"):
    tensor = convert_to_HWC(make_np(tensor), dataformats)
    return pb.Summary(value=[pb.SummaryValue(tag=tag,
                                             image=make_image(_to_uint8(tensor), rescale))])


def make_image(tensor, rescale=1, rois=None, labels=None):
    """A Summary image (PNG) of an (H, W, C) uint8 array."""
    if rois is not None:
        from ..._unsupported import UnsupportedError
        raise UnsupportedError("torch.utils.tensorboard: drawing boxes on images is not "
                               "supported by torchish yet")
    height, width, channels = tensor.shape
    if rescale != 1:
        # nearest-neighbour resize (torch uses PIL's Lanczos, which would need PIL)
        sh, sw = int(height * rescale), int(width * rescale)
        rows = np.minimum((np.arange(sh) + 0.5) * height / max(sh, 1), height - 1)
        cols = np.minimum((np.arange(sw) + 0.5) * width / max(sw, 1), width - 1)
        tensor = tensor[rows.astype(int)][:, cols.astype(int)]
    return pb.SummaryImage(height=height, width=width, colorspace=channels,
                           encoded_image_string=encode_png(tensor))


def audio(tag, tensor, sample_rate=44100):
    array = make_np(tensor).squeeze()
    if abs(array).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        array = array.clip(-1, 1)
    if array.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    array = (array * np.iinfo(np.int16).max).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(array.data)
    sound = pb.SummaryAudio(sample_rate=sample_rate, num_channels=1,
                            length_frames=array.shape[-1],
                            encoded_audio_string=buf.getvalue(), content_type="audio/wav")
    return pb.Summary(value=[pb.SummaryValue(tag=tag, audio=sound)])


def custom_scalars(layout):
    categories = []
    for title, charts in layout.items():
        built = []
        for chart_name, (kind, tags) in ((k, v[:2]) for k, v in charts.items()):
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = pb.MarginSeries(value=tags[0], lower=tags[1], upper=tags[2])
                built.append(pb.Chart(title=chart_name,
                                      margin=pb.MarginChartContent(series=[series])))
            else:
                built.append(pb.Chart(title=chart_name,
                                      multiline=pb.MultilineChartContent(tag=list(tags))))
        categories.append(pb.Category(title=title, chart=built))
    proto = pb.TensorProto(dtype=pb.DT["DT_STRING"], tensor_shape=pb.TensorShapeProto(),
                           string_val=[pb.Layout(category=categories).SerializeToString()])
    return pb.Summary(value=[pb.SummaryValue(tag="custom_scalars__config__", tensor=proto,
                                             metadata=_plugin("custom_scalars"))])


def text(tag, text):
    metadata = _plugin("text", pb.TextPluginData(version=0).SerializeToString())
    proto = pb.TensorProto(dtype=pb.DT["DT_STRING"], string_val=[text.encode("utf_8")],
                           tensor_shape=_shape(1))
    return pb.Summary(value=[pb.SummaryValue(tag=tag + "/text_summary", metadata=metadata,
                                             tensor=proto)])


def _pr_summary(tag, data, num_thresholds):
    content = pb.PrCurvePluginData(version=0, num_thresholds=num_thresholds)
    proto = pb.TensorProto(dtype=pb.DT["DT_FLOAT"], float_val=data.reshape(-1).tolist(),
                           tensor_shape=_shape(data.shape[0], data.shape[1]))
    return pb.Summary(value=[pb.SummaryValue(
        tag=tag, metadata=_plugin("pr_curves", content.SerializeToString()), tensor=proto)])


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    # TensorBoard's PR-curve plugin handles at most 127 thresholds
    num_thresholds = min(num_thresholds, 127)
    data = np.stack([make_np(x) if isinstance(x, torchish.Tensor) else x
                     for x in (tp, fp, tn, fn, precision, recall)])
    return _pr_summary(tag, data, num_thresholds)


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    num_thresholds = min(num_thresholds, 127)
    data = compute_curve(labels, predictions, num_thresholds=num_thresholds, weights=weights)
    return _pr_summary(tag, data, num_thresholds)


def compute_curve(labels, predictions, num_thresholds=None, weights=None):
    """Stacked (tp, fp, tn, fn, precision, recall) over `num_thresholds` thresholds."""
    weights = 1.0 if weights is None else weights
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    labels = labels.astype(np.float64)
    hist = dict(bins=num_thresholds, range=(0, num_thresholds - 1))
    tp_buckets, _ = np.histogram(buckets, weights=labels * weights, **hist)
    fp_buckets, _ = np.histogram(buckets, weights=(1.0 - labels) * weights, **hist)
    # counts at or above each threshold: reversed cumulative sums
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    tiny = 1e-7
    return np.stack((tp, fp, tn, fn, tp / np.maximum(tiny, tp + fp),
                     tp / np.maximum(tiny, tp + fn)))


def _hparams_summary(tag, **data):
    content = pb.HParamsPluginData(version=0, **data).SerializeToString()
    return pb.Summary(value=[pb.SummaryValue(tag=tag, metadata=_plugin("hparams", content))])


def hparams(hparam_dict=None, metric_dict=None, hparam_domain_discrete=None):
    """The (experiment, session start, session end) summaries of TensorBoard's HParams
    plugin for one run."""
    for name, value in (("hparam_dict", hparam_dict), ("metric_dict", metric_dict)):
        if not isinstance(value, dict):
            logger.warning(f"parameter: {name} should be a dictionary, nothing logged.")
            raise TypeError(f"parameter: {name} should be a dictionary, nothing logged.")
    hparam_domain_discrete = hparam_domain_discrete or {}
    if not isinstance(hparam_domain_discrete, dict):
        raise TypeError(
            "parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in hparam_domain_discrete.items():
        if (k not in hparam_dict or not isinstance(v, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in v)):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")

    infos, entries = [], []
    for k, v in hparam_dict.items():
        if v is None:
            continue
        # bool is an int, so (as in torch) booleans are logged as numbers
        if isinstance(v, (int, float)):
            value, kind, field = pb.Value(number_value=v), "DATA_TYPE_FLOAT64", "number_value"
        elif isinstance(v, str):
            value, kind, field = pb.Value(string_value=v), "DATA_TYPE_STRING", "string_value"
        elif isinstance(v, torchish.Tensor):
            value, kind, field = pb.Value(number_value=make_np(v)[0]), "DATA_TYPE_FLOAT64", None
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        domain = None
        if field is not None and k in hparam_domain_discrete:
            domain = pb.ListValue(values=[pb.Value(**{field: d})
                                          for d in hparam_domain_discrete[k]])
        entries.append(pb.HparamsEntry(key=k, value=value))
        infos.append(pb.HParamInfo(name=k, type=pb.HPARAMS_DATA_TYPE[kind],
                                   domain_discrete=domain))

    metrics = [pb.MetricInfo(name=pb.MetricName(tag=k)) for k in metric_dict]
    exp = _hparams_summary("_hparams_/experiment",
                           experiment=pb.Experiment(hparam_infos=infos, metric_infos=metrics))
    ssi = _hparams_summary("_hparams_/session_start_info",
                           session_start_info=pb.SessionStartInfo(hparams=entries))
    sei = _hparams_summary("_hparams_/session_end_info", session_end_info=pb.SessionEndInfo(
        status=pb.HPARAMS_STATUS_SUCCESS))
    return exp, ssi, sei
