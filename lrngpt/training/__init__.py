"""The training loop with exact resume (trainer), its learning-rate schedule (schedule), its experiment
trackers (trackers)."""
