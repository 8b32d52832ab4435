"""wikipairs: Wikipedia dumps -> retrieval pre-training pairs (ICT, BFS, WLP) and a two-tower retriever.

The core (this package) is plain Python over plain dataclasses, in folders by stage: download/,
reading/ (dump files to pages), text/ (wikitext to articles), pairs/ (the three tasks), shards/
(output files and manifests). `wikipairs.pipelines` wires it into Apache Beam, `wikipairs.schemas`
declares the records, `wikipairs.trainer` trains and evaluates (README, "Layout").
"""
__version__ = "0.1.0"

from .records import Article, Link, Page, Redirect, Section, SiteInfo  # noqa: E402

__all__ = ["Article", "Link", "Page", "Redirect", "Section", "SiteInfo", "__version__"]
