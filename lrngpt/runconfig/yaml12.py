"""YAML config files, read by ruamel.yaml as YAML 1.2, within bounds.

YAML 1.2, not YAML 1.1 (PyYAML's): `yes`, `on`, `no`, `off` and `1:30` are strings (so `compile: yes` is
refused, not read as true) and `017` is 17. What the file holds must be plain data, as every config value is
(check_plain: a date, a set or binary data is refused), at most MAX_DEPTH levels deep and MAX_VALUES values,
an alias counted each time it is used, so a "billion laughs" file stops there.
"""

from __future__ import annotations

import re
from typing import Any

from lrngpt.core.fsio import too_many_digits
from lrngpt.errors import UserError
from lrngpt.runconfig.values import MAX_DEPTH, check_plain


def load_yaml(text: str, where: str) -> Any:
    """The value of a YAML 1.2 document (None for an empty one), plain data within bounds; every problem
    a UserError naming `where` and, while it is read, the line. Needs ruamel.yaml (the `yaml` extra)."""
    try:
        from ruamel.yaml import YAML, YAMLError
        from ruamel.yaml.composer import MaxDepthExceededError
    except ImportError:  # optional (the yaml extra): its absence is said in one line
        raise UserError(f"{where} is YAML, which needs ruamel.yaml: pip install ruamel.yaml (or pip install "
                        "'lrngpt[yaml]')") from None

    yaml = YAML(typ="safe", pure=True)
    yaml.version = (1, 2)
    yaml.max_depth = MAX_DEPTH + 1  # (a scalar is one level more; check_plain holds the exact limit)
    try:
        value = yaml.load(text)
    except YAMLError as e:
        mark, problem = getattr(e, "problem_mark", None), getattr(e, "problem", None) or ""
        if isinstance(e, MaxDepthExceededError):
            raise UserError(f"{where}: line {e.problem_mark.line + 1}: lists and mappings nested more than {MAX_DEPTH} deep; a "
                            "config is a few levels deep") from None
        at = f" (line {mark.line + 1}: {problem.removeprefix('but ')})" if mark else ""
        raise UserError(f"{where} is not valid YAML{at}; fix it") from None
    except ValueError as e:  # a tagged word (!!int x), or more digits than Python's int() takes (it counts them)
        digits = re.search(r"has (\d+) digits", str(e))
        if digits:
            raise too_many_digits(int(digits[1]), where) from None
        raise UserError(f"{where}: a value does not read as the type its tag gives ({e}); fix it") from None
    check_plain(value, where)
    return value
