"""Experiments: sweeps over config keys x seeds (`grid`, `runner`, their directory `sweepdir`),
planned before they run (`dry_run`, with time estimates from `estimate`; a time budget: `budget`,
`timing`), the chapter's study presets and scales (`presets`), their tables (`summary`) and figures
(`figures`), and the book chapter's findings judged on them (`findings`, one judge each in `judges`;
the noise in `noise`, its arithmetic in `trend`, every threshold in `thresholds`, the chapter's
numbers and words in `chapter`, the commands advised in `advice`)."""
