"""Experiments: sweeps over config keys x seeds (`sweep`), the chapter's study presets and
scales (`presets`), their tables (`summary`) and figures (`figures`)."""
