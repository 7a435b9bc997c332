"""The training loop with exact resume (trainer), its learning-rate schedule (schedule), its experiment
trackers (trackers: one stream to TensorBoard, W&B, MLflow and CSV, each read back on a resume:
tracker_tensorboard, tracker_wandb, tracker_mlflow)."""
