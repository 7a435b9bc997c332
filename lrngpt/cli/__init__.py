"""The `lrn` command line: a thin layer over the library.

Each command group lives in its own module with a `register(subparsers)` function that adds
its parsers; a handler parses, calls one library function and prints its result with
`emit` (the JSON document with --json, else human text). Logs and progress go to stderr.
Nothing here imports torch at module level, so `lrn --help` and the torch-free commands
start fast.
"""
