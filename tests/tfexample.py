"""The test oracle for wikipairs.shards.tfrecord: `tf.train.Example` through protobuf itself, and a
reference CRC32C. Not production code (wikipairs.shards.tfrecord needs neither protobuf nor this).

* `Example` / `Feature`: message classes wire-compatible with tensorflow/core/example/
  {example,feature}.proto, declared in a private protobuf `DescriptorPool` (package
  `wikipairs.tfexample`), so they never clash with TensorFlow's own `tensorflow.Example` when
  both are imported in one process (neither apache-beam nor protobuf ships these messages).
* `encode_example(features)` / `encode_typed_example(features)`: protobuf's deterministic
  serialization, which `RowEncoder` must match byte for byte; `decode_example(data)`.
* `crc32c_reference(data)`: CRC32C bit by bit, to check google-crc32c and the framing against.
"""
from __future__ import annotations

from collections.abc import Mapping

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

__all__ = ["Example", "Feature", "crc32c_reference", "decode_example", "encode_example",
           "encode_typed_example"]

_PACKAGE = "wikipairs.tfexample"


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto of example.proto + feature.proto (same field numbers and types)."""
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="wikipairs/tfexample.proto", package=_PACKAGE,
                                             syntax="proto3")

    def message(name: str, *fields: tuple) -> descriptor_pb2.DescriptorProto:
        msg = fdp.message_type.add(name=name)
        for fname, number, ftype, label, type_name, extra in fields:
            field = msg.field.add(name=fname, number=number, type=ftype, label=label, **extra)
            if type_name:
                field.type_name = f".{_PACKAGE}.{type_name}"
        return msg

    rep, opt = F.LABEL_REPEATED, F.LABEL_OPTIONAL
    message("BytesList", ("value", 1, F.TYPE_BYTES, rep, None, {}))
    packed = {"options": descriptor_pb2.FieldOptions(packed=True)}
    message("FloatList", ("value", 1, F.TYPE_FLOAT, rep, None, packed))
    message("Int64List", ("value", 1, F.TYPE_INT64, rep, None, packed))
    feature = message("Feature",
                      ("bytes_list", 1, F.TYPE_MESSAGE, opt, "BytesList", {"oneof_index": 0}),
                      ("float_list", 2, F.TYPE_MESSAGE, opt, "FloatList", {"oneof_index": 0}),
                      ("int64_list", 3, F.TYPE_MESSAGE, opt, "Int64List", {"oneof_index": 0}))
    feature.oneof_decl.add(name="kind")
    features = message("Features",
                       ("feature", 1, F.TYPE_MESSAGE, rep, "Features.FeatureEntry", {}))
    entry = features.nested_type.add(name="FeatureEntry",
                                     options=descriptor_pb2.MessageOptions(map_entry=True))
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=opt)
    entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=opt,
                    type_name=f".{_PACKAGE}.Feature")
    message("Example", ("features", 1, F.TYPE_MESSAGE, opt, "Features", {}))
    return fdp


def _message_classes() -> dict[str, type]:
    """Message classes by name, from a private pool (TensorFlow's default pool is untouched)."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file_descriptor())
    names = ("BytesList", "FloatList", "Int64List", "Feature", "Features", "Example")
    return {n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{n}"))
            for n in names}


_MESSAGES = _message_classes()
Example = _MESSAGES["Example"]   # wire-compatible with tf.train.Example
Feature = _MESSAGES["Feature"]   # wire-compatible with tf.train.Feature

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _kind(value: object) -> str:
    """The Feature kind ("bytes_list", "int64_list", "float_list") of one scalar value."""
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return "bytes_list"
    if isinstance(value, int) or hasattr(value, "__index__") and not isinstance(value, float):
        return "int64_list"
    if isinstance(value, float) or hasattr(value, "__float__"):
        return "float_list"
    raise TypeError(f"unsupported feature value {value!r} ({type(value).__name__})")


def _fill_feature(feature, key: str, value: object) -> None:
    """Sets `feature` (a Feature message) from a scalar or a list/tuple of one kind.

    An empty list leaves the Feature with no kind set: TensorFlow reads that as an empty value
    for a VarLenFeature of any dtype (an empty int64_list would fail for tf.string, and so on).
    """
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        return
    kinds = {_kind(v) for v in values}
    if len(kinds) != 1:
        raise TypeError(f"feature {key!r} mixes value kinds {sorted(kinds)}")
    kind = kinds.pop()
    if kind == "bytes_list":
        values = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
    elif kind == "int64_list":
        values = [int(v) for v in values]
        if min(values) < _INT64_MIN or max(values) > _INT64_MAX:
            raise ValueError(f"feature {key!r}: integer out of int64 range")
    else:
        values = [float(v) for v in values]
    getattr(feature, kind).value.extend(values)


def encode_example(features: Mapping[str, object]) -> bytes:
    """Serializes a `tf.train.Example`.

    Input: {name: value}, value a str (-> bytes_list, UTF-8), bytes (bytes_list), int (incl.
    bool and NumPy integers; int64_list), float (float_list, stored as float32), or a
    list/tuple of values of one of those kinds; an empty list gives a Feature with no kind
    (an empty VarLenFeature of any dtype in TensorFlow).
    Output: the serialized Example, through protobuf's deterministic serialization: features
    in its map order (with the upb runtime, wikipairs.shards.tfrecord._map_key's), whatever the
    order of the input, so equal inputs give equal bytes in every process.
    """
    example = Example()
    feature_map = example.features.feature
    for key, value in features.items():
        if not isinstance(key, str):
            raise TypeError(f"feature names must be str, got {key!r}")
        _fill_feature(feature_map[key], key, value)
    return example.SerializeToString(deterministic=True)


_LIST_FIELDS = {"bytes": "bytes_list", "int64": "int64_list", "float": "float_list"}


def encode_typed_example(features: Mapping[str, tuple[str, list]]) -> bytes:
    """Serializes a `tf.train.Example` from {name: (kind, values)} with kind "bytes" | "int64" |
    "float" known in advance (e.g. from a schema): no per-value type checks, so several times
    faster than `encode_example`, and byte-identical to it for the same values."""
    example = Example()
    feature_map = example.features.feature
    for key, (kind, values) in features.items():
        feature = feature_map[key]
        if values:
            getattr(feature, _LIST_FIELDS[kind]).value.extend(values)
    return example.SerializeToString(deterministic=True)


def decode_example(data: bytes) -> dict[str, list]:
    """Parses a serialized `tf.train.Example` into {name: list of values}.

    bytes_list -> list[bytes] (not decoded: the format does not say which are text),
    int64_list -> list[int], float_list -> list[float] (float32 values); a Feature with no
    kind -> []. Raises ValueError on bytes that are not an Example.
    """
    example = Example()
    try:
        example.ParseFromString(data)
    except Exception as exc:  # protobuf's DecodeError is a subclass of Exception only
        raise ValueError(f"not a serialized tf.train.Example: {exc}") from exc
    out: dict[str, list] = {}
    for key, feature in example.features.feature.items():
        kind = feature.WhichOneof("kind")
        out[key] = list(getattr(feature, kind).value) if kind else []
    return out


def crc32c_reference(data: bytes) -> int:
    """CRC32C (Castagnoli: reflected polynomial 0x82F63B78, init and xorout 0xFFFFFFFF), one bit
    at a time: slow and obviously right."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF
