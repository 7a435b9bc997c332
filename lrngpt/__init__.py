"""lrn-gpt: a laboratory for small language models."""

__version__ = "0.1.0"
