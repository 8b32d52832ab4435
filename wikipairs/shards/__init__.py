"""Shard I/O: the output folders (temporary names, manifests), the pair shards in Parquet and
TFRecord, and the commands that read them back (verify, stats, show).
"""
