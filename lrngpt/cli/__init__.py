"""The `lrn` command line: a thin layer over the library.

Each command group lives in its own module with a `register(subparsers)` function that
adds its parsers; a command's handler returns `(result, text)` and `emit` prints either
the JSON document (`--json`) or the human text. Logs and progress go to stderr.
"""
