"""YAML config files, read by ruamel.yaml narrowed to YAML 1.2's core schema, within bounds.

`017` is 17, `1e-3` a number; `1:30`, `2024-01-01`, `1_000`, `0b101`, `yes`, `on`, `no`, `off` are strings
(so `compile: yes` is refused, not read as true); tags outside the core schema and `<<` merge keys are
refused. At most MAX_VALUES values and MAX_DEPTH levels are composed, a key appears once, and the value
is checked as every config value is (check_plain: an alias counts each time it is used, so a "billion
laughs" file stops there).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from lrngpt.core.fsio import MAX_INT_DIGITS, int_digits, too_many_digits
from lrngpt.errors import UserError
from lrngpt.runconfig.values import MAX_DEPTH, MAX_VALUES, PLAIN, check_plain

TAG = "tag:yaml.org,2002:"
CORE = {  # the core schema's implicit types, in the order they are tried
    "null": r"null|Null|NULL|~|",
    "bool": r"true|True|TRUE|false|False|FALSE",
    "int": r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+",
    "float": r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
}


def _fail(node_or_event: Any, what: str) -> UserError:
    return UserError(f"line {node_or_event.start_mark.line + 1}: {what}")  # (load_yaml puts the file first)


@functools.cache
def _core_classes() -> tuple[Any, Any, Any]:
    """ruamel.yaml's resolver, composer and constructor narrowed to the core schema, bounded (made on first use)."""
    from ruamel.yaml.composer import Composer
    from ruamel.yaml.constructor import SafeConstructor
    from ruamel.yaml.resolver import BaseResolver

    class CoreResolver(BaseResolver):
        processing_version = (1, 2)  # (whatever %YAML directive the file has)

        def __init__(self, version: Any = None, loader: Any = None):
            super().__init__(loader)

    for kind, pattern in CORE.items():
        CoreResolver.add_implicit_resolver_base(f"{TAG}{kind}", re.compile(f"^(?:{pattern})$"), None)

    class BoundedComposer(Composer):  # (the nesting: ruamel.yaml's max_depth)
        values = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.values += 1
            if self.values > MAX_VALUES:
                raise _fail(self.parser.peek_event(), f"more than {MAX_VALUES:,} values; a config has a few dozen")
            return super().compose_node(parent, index)

    class CoreConstructor(SafeConstructor):
        yaml_constructors: dict = {}  # its own: the core schema's tags, and a refusal of any other

        def construct_core(self, node: Any) -> Any:  # (the text checked, ruamel.yaml's own conversion)
            text, kind = self.construct_scalar(node), node.tag[len(TAG):]
            if not re.fullmatch(CORE[kind], text):
                raise _fail(node, f"{text[:40]!r} is not a YAML 1.2 {kind}")
            if kind == "int" and int_digits(text) > MAX_INT_DIGITS:
                raise too_many_digits(int_digits(text), f"line {node.start_mark.line + 1}")
            return getattr(SafeConstructor, f"construct_yaml_{kind}")(self, node)

        def flatten_mapping(self, node: Any) -> None:  # (ruamel.yaml merges << keys here)
            merge = next((k for k, _ in node.value if k.tag == f"{TAG}str" and k.value == "<<" and k.style is None),
                         None)
            if merge is not None:
                raise _fail(merge, "'<<' merge keys are YAML 1.1, and this file is read as YAML 1.2; write the "
                                   "keys out")

        def construct_undefined(self, node: Any) -> None:
            tag = node.tag.replace(TAG, "!!", 1) if node.tag.startswith(TAG) else node.tag
            raise _fail(node, f"the tag {tag} is not a config value; {PLAIN}")

    for kind in CORE:
        CoreConstructor.add_constructor(f"{TAG}{kind}", CoreConstructor.construct_core)
    for kind, make in (("str", SafeConstructor.construct_yaml_str), ("seq", SafeConstructor.construct_yaml_seq),
                       ("map", SafeConstructor.construct_yaml_map)):
        CoreConstructor.add_constructor(f"{TAG}{kind}", make)
    CoreConstructor.add_constructor(None, CoreConstructor.construct_undefined)
    return CoreResolver, BoundedComposer, CoreConstructor


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
    yaml.Resolver, yaml.Composer, yaml.Constructor = _core_classes()
    yaml.max_depth = MAX_DEPTH + 1  # (a scalar is one level more; check_plain holds the exact limit)
    try:
        value = yaml.load(text)
    except UserError as e:
        raise UserError(f"{where}: {e.text}") from None
    except YAMLError as e:
        mark, problem = getattr(e, "problem_mark", None), getattr(e, "problem", None) or ""
        if isinstance(e, MaxDepthExceededError):
            raise UserError(f"{where}: line {e.problem_mark.line + 1}: lists and mappings nested more than {MAX_DEPTH} deep; a "
                            "config is a few levels deep") from None
        at = f" (line {mark.line + 1}: {problem.removeprefix('but ')})" if mark else ""
        raise UserError(f"{where} is not valid YAML{at}; fix it") from None
    check_plain(value, where)
    return value
