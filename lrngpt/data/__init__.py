"""Corpus -> cached, memory-mapped token arrays and the batch sampler (prepared); the validation split (splits)."""
