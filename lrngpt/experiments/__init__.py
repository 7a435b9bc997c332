"""Experiments: sweeps (`grid`, `runner`, `sweepdir`), planned before they run (`dry_run`, `budget`),
the study presets (`presets`), their tables and figures (`summary`, `figures`), the book chapter's
findings judged on them (`findings`, `judges`, each verdict a `finding.Finding`), and the whole chapter
in one command (`chapter_plan`, `chapter_budget`, `chapter_dir`).

"plan" is always what will run and its estimated time, made before anything runs; a "study" is a sweep
preset that tests one claim; a "scale" a sweep's size; a "finding" a claim judged on measured numbers.
"""
