"""Interoperability with the Hugging Face ecosystem: GPT-2 checkpoints in and out (gpt2.py, with the one
name and config mapping; hf_export.py). It reads and writes run directories."""
