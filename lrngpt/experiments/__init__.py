"""Experiments: sweeps over config keys x seeds (`grid`, `runner`, their directory `sweepdir`),
planned before they run (`dry_run`, with time estimates from lrngpt.training.timing; a time budget:
`budget`), the study presets and scales (`presets`), their tables (`summary`) and figures (`figures`),
the book chapter's findings judged on them (`findings`, one judge each in `judges`, each verdict a
`finding.Finding`; the noise in `noise`, its arithmetic in `trend`, every threshold in `thresholds`,
the chapter's numbers and words in `chapter`, the commands advised in `advice`), and the whole
chapter in one command (`chapter_plan`, `chapter_budget`, its directory `chapter_dir`).

Words with one meaning each here:

    plan        what will run and its estimated time, made before anything runs: a sweep's
                (`dry_run.dry_run_plan`, the API's `plan_sweep`), a time budget's (`budget.plan_budget`,
                kept in sweep.json as `budget`), the width-depth series' (`depth_series.plan_series`),
                the planted pair's (`planted.planted_plan`), the chapter's (`chapter_plan.ChapterPlan`)
    study       a sweep preset that tests one claim (`presets.STUDIES`: embed-dim, seed-variance, ...)
    claim       what the chapter argues, one per part of `lrn chapter` (`chapter_plan.CLAIMS`)
    scale       a sweep's size (`presets.SCALES`: full, cpu, tiny, budget); the chapter's protocols are
                `chapter_plan.CHAPTER_SCALES` (laptop, tiny, full)
    finding     a claim judged on measured numbers, with its verdict and reason (`finding.Finding`)
"""
