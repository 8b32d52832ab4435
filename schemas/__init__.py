"""Record schemas, declared once. Installed as `wikipairs.schemas`.

Each schema is a tuple of `Field`s; from it come the Arrow schema (Parquet), the tf.train.Example
feature spec (TFRecord, flat schemas only) and the Markdown tables in schemas/README.md.
"""
from .fields import (Field, arrow_schema, example_kinds, example_values, markdown_table,
                     tf_feature_spec, to_arrow_rows)
from .article import ARTICLE, REDIRECT
from .pair import (HARD_NEGATIVE_IDS, HARD_NEGATIVES, PAIR, SCHEMA_VERSION, TOKEN_IDS,
                   current_pair_row, pair_fields)

__all__ = ["Field", "arrow_schema", "example_kinds", "example_values", "markdown_table",
           "tf_feature_spec", "to_arrow_rows", "ARTICLE", "REDIRECT", "PAIR", "TOKEN_IDS",
           "HARD_NEGATIVES", "HARD_NEGATIVE_IDS",
           "pair_fields", "SCHEMA_VERSION", "current_pair_row"]
