"""The ground rules every layer stands on: atomic writes and OS errors (fsio), what lrn may replace
(ownership), the one logger (log), the one value checker (validate)."""
