"""Record schemas, declared once. Installed as `wikipairs.schemas`.

Each schema is a tuple of `Field`s; from it come the Arrow schema (Parquet), the tf.train.Example
feature spec (TFRecord, flat schemas only) and the Markdown tables in schemas/README.md.
"""
from .fields import Field, arrow_schema, markdown_table, to_arrow_rows
from .article import ARTICLE, REDIRECT

__all__ = ["Field", "arrow_schema", "markdown_table", "to_arrow_rows", "ARTICLE", "REDIRECT"]
