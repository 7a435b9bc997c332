"""What a run keeps on disk: RunDir, the owner of a run directory (rundir); what its summary.json and
metrics.jsonl must hold (run_files); the checkpoint schema (checkpoint)."""
