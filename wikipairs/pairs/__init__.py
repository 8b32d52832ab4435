"""Pairs: the three pre-training tasks over articles, seeded sampling, the vocabulary that
gives them token ids, and the quality metrics of their text.
"""
