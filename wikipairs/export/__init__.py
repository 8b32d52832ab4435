"""`wikipairs export`: a build's pairs for other trainers."""
