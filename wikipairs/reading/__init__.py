"""Reading dumps: from a file (or a part of one) to `Page` records.

The path of a page: `sources.open_xml(path)` (compression, UTF-16, truncation; `ChunkStream` for a
split's part of a file) -> an `XmlStream` -> `page_reader.PageReader` (mwxml -> Page, siteinfo,
one-line errors naming the user's file, line and page; `DumpFile` for a whole file). The one
byte-level `<page>` scanner (`page_scanner.PageScanner`) serves the stages that need no parsing:
the redirects pass, the language sample, and `splits` (byte ranges of whole pages, multistream
copies). `splits.read_split(split)` hands the page reader a stream, never a temporary file.
"""
from .language_sample import check_declared_language, language_mismatch
from .page_reader import DumpFile, PageReader, read_pages
from .page_scanner import PageBlock, PageScanner
from .sources import XmlStream, expand_inputs, open_xml
from .splits import Split, plan_splits, prepare_file, read_split

__all__ = ["DumpFile", "PageBlock", "PageReader", "PageScanner", "Split", "XmlStream",
           "check_declared_language", "expand_inputs", "language_mismatch", "open_xml",
           "plan_splits", "prepare_file", "read_pages", "read_split"]
