"""Text: wikitext to articles (sections, sentences, links, categories), titles and
redirects, the localized names of every wiki, the token measure.
"""
