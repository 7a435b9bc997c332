"""lrn's version: one definition, read by the package's face (`lrngpt.__version__`), `lrn --version`, the
records lrn writes beside its outputs and each run's summary. pyproject.toml states the same number for
packaging (tests/test_packaging.py checks that they agree)."""

__version__ = "0.1.0"
