"""A minimal protocol-buffer encoder and the TensorBoard messages SummaryWriter writes.

Only serialization is needed (TensorBoard reads the files), so a message is a class with a
field table; `SerializeToString()` follows proto3 rules: singular scalars at their default
value are left out unless they belong to a oneof, packed encoding for repeated numbers, and
fields in field-number order (what the official protobuf runtime emits, so the bytes match).
Field numbers come from TensorBoard's .proto files (event.proto, summary.proto, tensor.proto,
the hparams/text/pr_curve/custom_scalar plugin protos).
"""
import struct

import numpy as np

_VARINT_KINDS = {"int32", "int64", "uint32", "uint64", "bool", "enum"}
_WIRE = {"double": 1, "float": 5, "string": 2, "bytes": 2}


def _varint(n):
    n &= 0xFFFFFFFFFFFFFFFF  # negative ints are sent as 64-bit two's complement
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _key(number, wire):
    return _varint((number << 3) | wire)


def _float32_bytes(values):
    with np.errstate(over="ignore"):  # like a C cast: out-of-range doubles become inf
        return np.asarray(values, dtype=np.float64).astype("<f4").tobytes()


def _scalar_bytes(kind, value):
    if kind == "double":
        return struct.pack("<d", float(value))
    if kind == "float":
        return _float32_bytes(float(value))
    if kind in _VARINT_KINDS:
        return _varint(int(value))
    if kind == "string":
        return value.encode("utf-8") if isinstance(value, str) else bytes(value)
    if kind == "bytes":
        return value.encode("utf-8") if isinstance(value, str) else bytes(value)
    raise TypeError(kind)


def _is_default(kind, value):
    if kind in ("double", "float"):
        return _scalar_bytes(kind, value) == bytes(len(_scalar_bytes(kind, value)))
    return not value


class Message:
    """Base class: FIELDS maps a field name to (number, kind, flags); kind is a scalar kind
    name or a Message subclass; flags is a string holding 'r' (repeated) and/or 'o' (oneof)."""
    FIELDS = {}

    def __init__(self, **kwargs):
        for name, value in kwargs.items():
            if name not in self.FIELDS:
                raise TypeError(f"{type(self).__name__} has no field {name!r}")
            setattr(self, name, value)

    def __getattr__(self, name):
        if name in type(self).FIELDS:
            return None
        raise AttributeError(name)

    def __repr__(self):
        set_fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.FIELDS
                               if getattr(self, n) is not None)
        return f"{type(self).__name__}({set_fields})"

    def SerializeToString(self):
        out = []
        for name, (number, kind, flags) in sorted(self.FIELDS.items(), key=lambda f: f[1][0]):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(kind, type):
                items = value if "r" in flags else [value]
                for item in items:
                    body = item.SerializeToString()
                    out += [_key(number, 2), _varint(len(body)), body]
            elif "r" in flags:
                if len(value) == 0:
                    continue
                if kind in ("string", "bytes"):
                    for item in value:
                        body = _scalar_bytes(kind, item)
                        out += [_key(number, 2), _varint(len(body)), body]
                    continue
                if kind == "double":
                    body = np.asarray(value, dtype=np.float64).astype("<f8").tobytes()
                elif kind == "float":
                    body = _float32_bytes(value)
                else:
                    body = b"".join(_varint(int(v)) for v in value)
                out += [_key(number, 2), _varint(len(body)), body]
            else:
                if "o" not in flags and _is_default(kind, value):
                    continue
                body = _scalar_bytes(kind, value)
                if kind in ("string", "bytes"):
                    out += [_key(number, 2), _varint(len(body)), body]
                else:
                    out += [_key(number, _WIRE.get(kind, 0)), body]
        return b"".join(out)


def _message(_cls_name, **fields):
    return type(_cls_name, (Message,), {"FIELDS": fields})


# tensorboard/compat/proto: tensor_shape.proto, tensor.proto, summary.proto, event.proto
TensorShapeDim = _message("TensorShapeDim", size=(1, "int64", ""), name=(2, "string", ""))
TensorShapeProto = _message("TensorShapeProto", dim=(2, TensorShapeDim, "r"),
                            unknown_rank=(3, "bool", ""))
TensorProto = _message(
    "TensorProto", dtype=(1, "enum", ""), tensor_shape=(2, TensorShapeProto, ""),
    version_number=(3, "int32", ""), tensor_content=(4, "bytes", ""),
    float_val=(5, "float", "r"), double_val=(6, "double", "r"), int_val=(7, "int32", "r"),
    string_val=(8, "bytes", "r"), scomplex_val=(9, "float", "r"),
    int64_val=(10, "int64", "r"), bool_val=(11, "bool", "r"),
    dcomplex_val=(12, "double", "r"), half_val=(13, "int32", "r"),
    uint32_val=(16, "uint32", "r"), uint64_val=(17, "uint64", "r"))
# types.proto DataType values
DT = {"DT_FLOAT": 1, "DT_DOUBLE": 2, "DT_INT32": 3, "DT_UINT8": 4, "DT_INT16": 5,
      "DT_INT8": 6, "DT_STRING": 7, "DT_COMPLEX64": 8, "DT_INT64": 9, "DT_BOOL": 10,
      "DT_BFLOAT16": 14, "DT_COMPLEX128": 18, "DT_HALF": 19}

HistogramProto = _message(
    "HistogramProto", min=(1, "double", ""), max=(2, "double", ""), num=(3, "double", ""),
    sum=(4, "double", ""), sum_squares=(5, "double", ""),
    bucket_limit=(6, "double", "r"), bucket=(7, "double", "r"))
PluginData = _message("PluginData", plugin_name=(1, "string", ""), content=(2, "bytes", ""))
SummaryMetadata = _message(
    "SummaryMetadata", plugin_data=(1, PluginData, ""), display_name=(2, "string", ""),
    summary_description=(3, "string", ""), data_class=(4, "enum", ""))
SummaryImage = _message(
    "SummaryImage", height=(1, "int32", ""), width=(2, "int32", ""),
    colorspace=(3, "int32", ""), encoded_image_string=(4, "bytes", ""))
SummaryAudio = _message(
    "SummaryAudio", sample_rate=(1, "float", ""), num_channels=(2, "int64", ""),
    length_frames=(3, "int64", ""), encoded_audio_string=(4, "bytes", ""),
    content_type=(5, "string", ""))
SummaryValue = _message(
    "SummaryValue", tag=(1, "string", ""), simple_value=(2, "float", "o"),
    image=(4, SummaryImage, "o"), histo=(5, HistogramProto, "o"),
    audio=(6, SummaryAudio, "o"), node_name=(7, "string", ""),
    tensor=(8, TensorProto, "o"), metadata=(9, SummaryMetadata, ""))
Summary = _message("Summary", value=(1, SummaryValue, "r"))

SESSION_START = 1
SessionLog = _message("SessionLog", status=(1, "enum", ""), checkpoint_path=(2, "string", ""),
                      msg=(3, "string", ""))
SourceMetadata = _message("SourceMetadata", writer=(1, "string", ""))
Event = _message(
    "Event", wall_time=(1, "double", ""), step=(2, "int64", ""),
    file_version=(3, "string", "o"), graph_def=(4, "bytes", "o"), summary=(5, Summary, "o"),
    session_log=(7, SessionLog, "o"), source_metadata=(10, SourceMetadata, ""))

# plugin payloads: text, pr_curves, custom_scalars (layout.proto)
TextPluginData = _message("TextPluginData", version=(1, "int32", ""))
PrCurvePluginData = _message("PrCurvePluginData", version=(1, "int32", ""),
                             num_thresholds=(2, "uint32", ""))
MarginSeries = _message("MarginSeries", value=(1, "string", ""), lower=(2, "string", ""),
                        upper=(3, "string", ""))
MarginChartContent = _message("MarginChartContent", series=(1, MarginSeries, "r"))
MultilineChartContent = _message("MultilineChartContent", tag=(1, "string", "r"))
Chart = _message("Chart", title=(1, "string", ""), multiline=(2, MultilineChartContent, "o"),
                 margin=(3, MarginChartContent, "o"))
Category = _message("Category", title=(1, "string", ""), chart=(2, Chart, "r"),
                    closed=(3, "bool", ""))
Layout = _message("Layout", version=(1, "int32", ""), category=(2, Category, "r"))

# hparams plugin (api.proto, plugin_data.proto) and google.protobuf.Value / ListValue
Value = _message("Value", number_value=(2, "double", "o"), string_value=(3, "string", "o"),
                 bool_value=(4, "bool", "o"))
ListValue = _message("ListValue", values=(1, Value, "r"))
HParamInfo = _message(
    "HParamInfo", name=(1, "string", ""), display_name=(2, "string", ""),
    description=(3, "string", ""), type=(4, "enum", ""), domain_discrete=(5, ListValue, "o"))
MetricName = _message("MetricName", group=(1, "string", ""), tag=(2, "string", ""))
MetricInfo = _message("MetricInfo", name=(1, MetricName, ""), display_name=(3, "string", ""))
Experiment = _message(
    "Experiment", description=(1, "string", ""), user=(2, "string", ""),
    time_created_secs=(3, "double", ""), hparam_infos=(4, HParamInfo, "r"),
    metric_infos=(5, MetricInfo, "r"), name=(6, "string", ""))
HparamsEntry = _message("HparamsEntry", key=(1, "string", ""), value=(2, Value, ""))
SessionStartInfo = _message(
    "SessionStartInfo", hparams=(1, HparamsEntry, "r"), model_uri=(2, "string", ""),
    monitor_url=(3, "string", ""), group_name=(4, "string", ""),
    start_time_secs=(5, "double", ""))
SessionEndInfo = _message("SessionEndInfo", status=(1, "enum", ""),
                          end_time_secs=(2, "double", ""))
HParamsPluginData = _message(
    "HParamsPluginData", version=(1, "int32", ""), experiment=(2, Experiment, "o"),
    session_start_info=(3, SessionStartInfo, "o"), session_end_info=(4, SessionEndInfo, "o"))
HPARAMS_DATA_TYPE = {"DATA_TYPE_STRING": 1, "DATA_TYPE_BOOL": 2, "DATA_TYPE_FLOAT64": 3}
HPARAMS_STATUS_SUCCESS = 1
