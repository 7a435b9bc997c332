"""Experiments: sweeps over config keys x seeds (`sweep`), planned before they run (`plan`, with
time estimates from `estimate`), the chapter's study presets and scales (`presets`), their tables
(`summary`) and figures (`figures`)."""
