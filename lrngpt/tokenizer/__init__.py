"""The byte-level BPE: trained with `tokenizers`, encoded with `tiktoken`, and `token_bytes` (bpe)."""
