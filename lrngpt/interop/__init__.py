"""Interoperability with the Hugging Face ecosystem: GPT-2 checkpoints in (gpt2.py) and out
(hf_export.py), through one name and config mapping (gpt2_map.py).

This package sits above models/config/checkpoint/run: it reads and writes run directories.
"""
