"""A trained model used, not trained: bits per byte (evaluate), sampling with the GPT's KV cache (sample)."""
