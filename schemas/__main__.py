"""Print schemas/README.md: `python -m wikipairs.schemas > schemas/README.md` (a test checks it)."""
from . import ARTICLE, HARD_NEGATIVE_IDS, HARD_NEGATIVES, PAIR, REDIRECT, TOKEN_IDS, markdown_table


def render() -> str:
    return "\n".join([
        "# Record schemas",
        "",
        "Generated from the declarations in this folder by `python -m wikipairs.schemas`; do not edit.",
        "",
        "## Article (`articles/part-*.parquet`, written by `wikipairs parse`)",
        "",
        markdown_table(ARTICLE),
        "",
        "## Redirect (`redirects.parquet`)",
        "",
        markdown_table(REDIRECT),
        "",
        "## Pair (`parquet/<task>/part-*.parquet` and `tfrecord/<task>/part-*.tfrecord.gz`, "
        "written by `wikipairs build`)",
        "",
        "In TFRecord shards each pair is a `tf.train.Example`: strings are `bytes_list`, integers and",
        "booleans `int64_list` (one value for scalars), token id lists variable-length `int64_list`.",
        "",
        markdown_table(PAIR),
        "",
        "With `--vocab` also:",
        "",
        markdown_table(TOKEN_IDS),
        "",
        "With `--hard-negatives N` also (one entry per negative, up to N; "
        "wikipairs/pairs/negatives.py):",
        "",
        markdown_table(HARD_NEGATIVES),
        "",
        "With both:",
        "",
        markdown_table(HARD_NEGATIVE_IDS),
        "",
    ])


if __name__ == "__main__":
    print(render(), end="")
