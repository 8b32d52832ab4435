"""A tiny typed schema language: scalars, lists and structs, with docs on every field."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import pyarrow as pa

_SCALARS = {"int64": pa.int64(), "int32": pa.int32(), "string": pa.string(),
            "float32": pa.float32(), "bool": pa.bool_()}


@dataclass(frozen=True)
class Field:
    """A record field. `type` is a scalar name, "list" (of `item`) or "struct" (of `fields`)."""

    name: str
    type: str
    doc: str
    item: "Field | str | None" = None  # list element: a scalar name or a struct Field
    fields: tuple["Field", ...] = ()  # struct members

    def arrow_type(self) -> pa.DataType:
        if self.type in _SCALARS:
            return _SCALARS[self.type]
        if self.type == "list":
            item = self.item
            return pa.list_(_SCALARS[item] if isinstance(item, str) else item.arrow_type())
        if self.type == "struct":
            return pa.struct([pa.field(f.name, f.arrow_type(), nullable=True) for f in self.fields])
        raise ValueError(f"unknown field type {self.type!r}")

    def type_name(self) -> str:
        if self.type == "list":
            item = self.item
            return f"list<{item if isinstance(item, str) else item.type_name()}>"
        if self.type == "struct":
            return "struct{" + ", ".join(f.name for f in self.fields) + "}"
        return self.type


def arrow_schema(fields: tuple[Field, ...], metadata: dict | None = None) -> pa.Schema:
    return pa.schema([pa.field(f.name, f.arrow_type()) for f in fields], metadata=metadata)


def to_arrow_rows(fields: tuple[Field, ...], rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=arrow_schema(fields))


def _walk(fields, prefix=""):
    for f in fields:
        yield prefix + f.name, f
        if f.type == "struct":
            yield from _walk(f.fields, prefix + f.name + ".")
        elif f.type == "list" and isinstance(f.item, Field):
            yield from _walk(f.item.fields, prefix + f.name + "[].")


def markdown_table(fields: tuple[Field, ...]) -> str:
    lines = ["| field | type | meaning |", "|---|---|---|"]
    for path, f in _walk(fields):
        lines.append(f"| `{path}` | {f.type_name()} | {f.doc} |")
    return "\n".join(lines)


# tf.train.Example kinds: every scalar becomes a one-value list, bools become int64.
_EXAMPLE_KINDS = {"int64": "int64", "int32": "int64", "bool": "int64", "string": "bytes",
                  "float32": "float"}


@functools.lru_cache(maxsize=None)
def example_kinds(fields: tuple[Field, ...]) -> dict[str, tuple[str, bool]]:
    """name -> (Example list kind: "bytes" | "int64" | "float", is_variable_length).

    Only flat schemas (scalars and lists of scalars) map to tf.train.Example."""
    kinds = {}
    for f in fields:
        if f.type == "list" and isinstance(f.item, str):
            kinds[f.name] = (_EXAMPLE_KINDS[f.item], True)
        elif f.type in _EXAMPLE_KINDS:
            kinds[f.name] = (_EXAMPLE_KINDS[f.type], False)
        else:
            raise ValueError(f"field {f.name!r} ({f.type_name()}) has no tf.train.Example form")
    return kinds


def tf_feature_spec(fields: tuple[Field, ...]) -> dict:
    """The `tf.io.parse_example` spec: FixedLenFeature([]) for scalars, VarLenFeature for lists."""
    import tensorflow as tf  # only the trainer and tests call this

    dtypes = {"bytes": tf.string, "int64": tf.int64, "float": tf.float32}
    return {name: tf.io.VarLenFeature(dtypes[kind]) if is_list
            else tf.io.FixedLenFeature([], dtypes[kind])
            for name, (kind, is_list) in example_kinds(fields).items()}


def example_values(fields: tuple[Field, ...], row: dict) -> dict[str, tuple[str, list]]:
    """A row as Example features: name -> (kind, values), in schema order."""
    out = {}
    for name, (kind, is_list) in example_kinds(fields).items():
        value = row[name]
        if is_list:
            values = [v.encode("utf-8") if isinstance(v, str) else v for v in value] \
                if kind == "bytes" else list(value)
        elif kind == "bytes":
            values = [value.encode("utf-8") if isinstance(value, str) else value]
        else:
            values = [int(value) if kind == "int64" else value]
        out[name] = (kind, values)
    return out
