"""The `lrn` command line, a thin layer over lrngpt.api: each command group's module registers its parsers;
a handler calls one API function and prints its result with `emit` (JSON with --json, else text). No
torch at module level, so `lrn --help` starts fast."""
