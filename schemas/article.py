"""Parsed articles and the redirect table, as written by `wikipairs parse`."""
from .fields import Field

SECTION = Field("section", "struct", "A section; the lead is section 0 with level 0.", fields=(
    Field("heading", "string", "Heading text, markup removed; empty for the lead."),
    Field("level", "int32", "0 for the lead, 2 for `== h ==`, 3 for `=== h ===`, ..."),
    Field("paragraphs", "list", "Paragraphs, each a list of sentences.",
          item=Field("paragraph", "struct", "A paragraph.", fields=(
              Field("sentences", "list", "Sentences (NLTK Punkt) of the paragraph.", item="string"),
          ))),
))

LINK = Field("link", "struct", "A wikilink in the article text.", fields=(
    Field("target", "string", "Normalized title of the linked page, redirects resolved."),
    Field("raw_target", "string", "Normalized title as written, before redirect resolution."),
    Field("anchor", "string", "Anchor text as it appears in the sentence."),
    Field("section", "int32", "Index of the section holding the link; -1 for a link that is not in "
          "the text (inside a dropped template such as an infobox, or a dropped table): then "
          "paragraph, sentence, start and end are -1 too."),
    Field("paragraph", "int32", "Index of the paragraph in its section."),
    Field("sentence", "int32", "Index of the sentence in its paragraph."),
    Field("start", "int32", "Start offset of the anchor in the sentence (characters)."),
    Field("end", "int32", "End offset (exclusive) of the anchor in the sentence."),
))

ARTICLE = (
    Field("id", "int64", "Page id in the dump."),
    Field("title", "string", "Normalized page title."),
    Field("lang", "string", "Wiki language code (siteinfo, or --lang)."),
    Field("sections", "list", "Sections in page order.", item=SECTION),
    Field("links", "list", "Links to main-namespace pages: those in the text in text order, then "
          "those outside it (section -1).", item=LINK),
    Field("categories", "list", "Category names (without the namespace prefix).", item="string"),
)

REDIRECT = (
    Field("source", "string", "Normalized title of the redirect page."),
    Field("target", "string", "Its direct target (fragment dropped)."),
    Field("resolved", "string", "Final target after following the chain; null for cycles and chains "
          "deeper than the limit."),
)
