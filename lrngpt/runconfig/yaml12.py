"""YAML config files read as YAML 1.2 (its core schema), within bounds.

PyYAML (libyaml's parser where it is built in) reads the text into events; this module builds the
values from them as the YAML 1.2 core schema says, which PyYAML itself does not (it follows YAML
1.1): `017` is 17 (not octal 15), `1:30` and `2024-01-01` are strings (not 90 and a date), `yes`,
`on`, `no`, `off` are strings (so `compile: yes` is refused by the true/false check, not read as
true), `1e-3` is a number; `0o17`, `0x1F`, `.inf`, `.nan`, `~` as in YAML 1.2.

Built from events, not from PyYAML's node graph, so that every limit holds while the file is
read, and a signal (Ctrl-C, SIGTERM) is handled between events: at most MAX_DEPTH levels of
nesting, MAX_VALUES values with every use of an alias counted (a "billion laughs" file of nested
aliases stops at once), integers of at most MAX_INT_DIGITS digits, keys that are names and appear
once in their mapping (a repeated key or section is refused with both lines), and only the core
schema's tags (`!!binary`, `!!set`, `!!timestamp`, `!!python/...`, local tags are refused).
"""

from __future__ import annotations

import copy
import math
import re
from typing import Any

from lrngpt.core.bounded import MAX_DEPTH, MAX_INT_DIGITS, MAX_VALUES, PLAIN, int_digits, too_many_digits
from lrngpt.errors import UserError

TAG = "tag:yaml.org,2002:"
# The YAML 1.2 core schema's implicit types (https://yaml.org/spec/1.2.2/#1023-core-schema)
CORE = {
    "null": r"null|Null|NULL|~|",
    "bool": r"true|True|TRUE|false|False|FALSE",
    "int": r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+",
    "float": r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
}
FIRST = {"null": ["~", "n", "N", ""], "bool": list("tTfF"), "int": list("-+0123456789"),
         "float": list("-+0123456789.")}
SCALARS = {f"{TAG}{name}" for name in (*CORE, "str")}


def pyyaml():
    try:
        # optional: its absence is said in one line
        import yaml
    except ImportError:
        return None
    return yaml


def _loader_class(yaml):
    """A PyYAML loader whose resolver is the core schema's (libyaml's parser when PyYAML has it)."""
    base = getattr(yaml, "CSafeLoader", None) or yaml.SafeLoader

    class Core12Loader(base):
        yaml_implicit_resolvers: dict = {}  # (its own: PyYAML's are YAML 1.1's)

    for name, pattern in CORE.items():
        Core12Loader.add_implicit_resolver(f"{TAG}{name}", re.compile(f"^(?:{pattern})$"), FIRST[name])
    return Core12Loader


def _line(event) -> str:
    mark = getattr(event, "start_mark", None)
    return f"line {mark.line + 1}" if mark is not None else "somewhere"


def _tag_name(tag: str) -> str:
    return "!!" + tag[len(TAG):] if tag.startswith(TAG) else tag


class _Builder:
    """Values from the loader's events, every limit checked as they come."""

    def __init__(self, loader, yaml, where: str):
        self.loader, self.yaml, self.where = loader, yaml, where
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # anchor -> (value, values in it, its height)
        self.open: set[str] = set()  # anchors of collections still being read
        self.values = 0

    def fail(self, event, what: str) -> UserError:
        return UserError(f"{self.where}: {_line(event)}: {what}")

    def count(self, n: int, event) -> None:
        self.values += n
        if self.values > MAX_VALUES:
            raise self.fail(event, f"more than {MAX_VALUES:,} values once its aliases are expanded (a config has a "
                                   "few dozen): is it a 'billion laughs' file of nested aliases?")

    def document(self) -> Any:
        ev = self.yaml.events
        self.loader.get_event()  # the stream's start
        if self.loader.check_event(ev.StreamEndEvent):
            return None  # an empty file (or only comments)
        self.loader.get_event()  # the document's start
        value, _, _ = self.node(0)
        self.loader.get_event()  # the document's end
        if not self.loader.check_event(ev.StreamEndEvent):
            raise self.fail(self.loader.peek_event(), "a second YAML document (after ---); a config file holds one")
        return value

    def node(self, depth: int) -> tuple[Any, int, int]:
        """(value, the values in it, its height) of the next node."""
        ev = self.yaml.events
        event = self.loader.get_event()
        if isinstance(event, ev.AliasEvent):
            return self.alias(event, depth)
        if isinstance(event, ev.ScalarEvent):
            self.count(1, event)
            value = self.scalar(event)
            self.remember(event, value, 1, 0)
            return value, 1, 0
        if depth >= MAX_DEPTH:
            raise self.fail(event, f"lists and mappings nested more than {MAX_DEPTH} deep; a config is a few "
                                   "levels deep")
        is_map = isinstance(event, ev.MappingStartEvent)
        want = f"{TAG}map" if is_map else f"{TAG}seq"
        if event.tag not in (None, "!", want):
            raise self.fail(event, f"the tag {_tag_name(event.tag)} is not a config value; {PLAIN}")
        self.count(1, event)
        if event.anchor is not None:
            self.open.add(event.anchor)
        value, size, height = (self.mapping if is_map else self.sequence)(depth)
        self.open.discard(event.anchor)
        self.remember(event, value, size, height)
        return value, size, height

    def alias(self, event, depth: int) -> tuple[Any, int, int]:
        if event.anchor in self.open:
            raise self.fail(event, f"the alias *{event.anchor} refers to a list or mapping that holds it, which "
                                   "never ends; write the values out")
        if event.anchor not in self.anchors:
            raise self.fail(event, f"the alias *{event.anchor} has no anchor &{event.anchor} before it")
        value, size, height = self.anchors[event.anchor]
        self.count(size, event)  # before copying: a billion laughs stops here
        if depth + height > MAX_DEPTH:
            raise self.fail(event, f"lists and mappings nested more than {MAX_DEPTH} deep once *{event.anchor} is "
                                   "expanded; a config is a few levels deep")
        return copy.deepcopy(value), size, height

    def remember(self, event, value: Any, size: int, height: int) -> None:
        if event.anchor is not None:
            self.anchors[event.anchor] = (value, size, height)

    def sequence(self, depth: int) -> tuple[list, int, int]:
        items, size, height = [], 1, 0
        while not self.loader.check_event(self.yaml.events.SequenceEndEvent):
            value, n, h = self.node(depth + 1)
            items.append(value)
            size, height = size + n, max(height, h + 1)
        self.loader.get_event()
        return items, size, max(height, 1)

    def mapping(self, depth: int) -> tuple[dict, int, int]:
        out: dict[str, Any] = {}
        lines: dict[str, str] = {}
        size, height = 1, 0
        while not self.loader.check_event(self.yaml.events.MappingEndEvent):
            key_event = self.loader.peek_event()
            key, n, _ = self.node(depth + 1)
            if not isinstance(key, str):
                shown = "null" if key is None else str(key).lower() if isinstance(key, bool) else \
                    repr(key) if isinstance(key, int | float) else "a list or mapping"
                raise self.fail(key_event, f"the key {shown} is not a name; keys are names such as train or steps "
                                           "(quote it to make it one)")
            if key == "<<" and getattr(key_event, "implicit", (False,))[0]:
                raise self.fail(key_event, "'<<' merge keys are YAML 1.1, and this file is read as YAML 1.2; "
                                           "write the keys out")
            if key in out:
                raise self.fail(key_event, f"the key {key!r} appears a second time in its mapping (first on "
                                           f"{lines[key]}), and only one can hold; keep one")
            lines[key] = _line(key_event)
            value, m, h = self.node(depth + 1)
            out[key] = value
            size, height = size + n + m, max(height, h + 1)
        self.loader.get_event()
        return out, size, max(height, 1)

    def scalar(self, event) -> Any:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(self.yaml.ScalarNode, event.value, event.implicit) if tag is None \
                else f"{TAG}str"
        if tag not in SCALARS:
            raise self.fail(event, f"the tag {_tag_name(tag)} is not a config value; {PLAIN}")
        text, kind = event.value, tag[len(TAG):]
        if kind == "str":
            return text
        if not re.fullmatch(CORE[kind], text):
            raise self.fail(event, f"{text[:40]!r} is not a YAML 1.2 {kind}")
        if kind == "null":
            return None
        if kind == "bool":
            return text.lower() == "true"
        if kind == "int":
            if int_digits(text) > MAX_INT_DIGITS:
                raise too_many_digits(int_digits(text), f"{self.where}: {_line(event)}")
            return int(text, 0) if text[:2] in ("0o", "0x") else int(text, 10)
        if text.lstrip("+-").lower() == ".inf":
            return -math.inf if text.startswith("-") else math.inf
        return math.nan if text.lower() == ".nan" else float(text)


def load_yaml(text: str, where: str) -> Any:
    """The value of a YAML 1.2 document (None for an empty one); every problem a UserError naming
    `where` and the line. Needs PyYAML (the `yaml` extra)."""
    yaml = pyyaml()
    if yaml is None:
        raise UserError(f"{where} is YAML, which needs PyYAML: pip install pyyaml (or pip install 'lrngpt[yaml]')")
    loader = _loader_class(yaml)(text)
    try:
        return _Builder(loader, yaml, where).document()
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        at = f" (line {mark.line + 1}: {getattr(e, 'problem', '') or ''})" if mark else ""
        raise UserError(f"{where} is not valid YAML{at}; fix it") from None
    finally:
        loader.dispose()
