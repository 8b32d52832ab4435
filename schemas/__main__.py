"""Print schemas/README.md: `python -m wikipairs.schemas > schemas/README.md` (a test checks it)."""
from . import ARTICLE, REDIRECT, markdown_table


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
    ])


if __name__ == "__main__":
    print(render(), end="")
