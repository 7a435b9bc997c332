"""Corpora: where documents come from. A corpus string names its kind and where (lrngpt.corpora.registry,
which loads it); every kind's loader returns a `Corpus` (lrngpt.corpora.base)."""
