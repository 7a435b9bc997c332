"""Every argument of the public API checked against its annotation before any work (`load(): path
must be a path (str or Path), got None`); annotations are resolved on first call, so `import lrngpt`
loads no torch.
"""

from __future__ import annotations

import collections.abc as abc
import functools
import inspect
import os
import re
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, ParamSpec, Protocol, TypeVar, runtime_checkable

from lrngpt.core.fsio import MAX_INT_DIGITS
from lrngpt.errors import UserError, option
from lrngpt.runconfig.values import did_you_mean

P = ParamSpec("P")
R = TypeVar("R")

Checkpoint = Literal["last", "best", "init"]  # the weights of a run (lrngpt.store.layout.CHECKPOINTS)
Split = Literal["val", "train"]
Context = Literal["window", "full"]
# the library's choices, as types (tests/test_api.py checks them against lrngpt.runconfig, lrngpt.explorer, ...)
MapMethod = Literal["pca", "tsne", "umap"]
Precision = Literal["float32", "float16", "int8"]
ExportFormat = Literal["tsv", "projector"]


@runtime_checkable
class HasPath(Protocol):
    """A Run or a Sweep: anything with the path of its directory (a function may take either)."""
    path: Path


# Names the annotations use that are imported only under TYPE_CHECKING: module that defines each
LATE = {"RunConfig": "lrngpt.runconfig.schema", "Run": "lrngpt.api.results", "Sweep": "lrngpt.api.sweeps",
        "Figure": "matplotlib.figure", "Tokenizer": "lrngpt.tokenizer.bpe"}
_PATH = "a path (str or Path)"
SIMPLE: dict[Any, tuple[Callable[[Any], bool], str]] = {
    str: (lambda v: isinstance(v, str), "a string"),
    int: (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    float: (lambda v: isinstance(v, int | float) and not isinstance(v, bool), "a number"),
    bool: (lambda v: isinstance(v, bool), "True or False"),
    type(None): (lambda v: v is None, "None"),  # (get_type_hints says a None annotation as NoneType)
    Path: (lambda v: isinstance(v, os.PathLike), _PATH),
    Any: (lambda v: True, "any value"), object: (lambda v: True, "any value"),
    HasPath: (lambda v: isinstance(v, HasPath), "a Run or a Sweep"),
}
# An empty string where a path or one of these is asked for names nothing (Path("") is the current directory)
BLANK = {"corpus": "a corpus such as stories:5MB or text:PATH", "device": "a device such as auto, cpu or cuda"}


@functools.cache
def rule(hint: Any) -> tuple[Callable[[Any], bool], str]:
    """(does a value match `hint`, what `hint` takes in words)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in SIMPLE:
        return SIMPLE[hint]
    if origin in (typing.Union, types.UnionType):
        rules = [rule(a) for a in args]  # (a path is a str or a Path: "a string" is not said again)
        words = list(dict.fromkeys(w for _, w in rules if not (w == "a string" and Path in args)))
        return (lambda v: any(test(v) for test, _ in rules)), (", ".join(words[:-1]) + " or " + words[-1]
                                                                 if len(words) > 1 else words[0])
    if origin is Literal:
        return ((lambda v: any(v == a and type(v) is type(a) for a in args)),
                ("one of " if len(args) > 1 else "") + ", ".join(map(repr, args)))
    if abc.Callable in (origin, hint):  # (typing.Callable's origin is abc.Callable too)
        return callable, "a function"
    if isinstance(origin, type) and issubclass(origin, abc.Mapping):
        ktest, vtest = rule(args[0] if args else Any)[0], rule(args[1] if args else Any)[0]
        said = "a mapping" + (f" of {plural(args[0])} to {plural(args[1])}" if args else "")
        return (lambda v: isinstance(v, abc.Mapping) and all(ktest(k) and vtest(x) for k, x in v.items())), said
    if isinstance(origin, type) and issubclass(origin, abc.Iterable):
        item = rule(args[0] if args else Any)[0]

        def iterable(v: Any) -> bool:  # (an iterator: its items are checked where they are used, not consumed)
            return isinstance(v, abc.Iterable) and not isinstance(v, str | bytes) and (
                not isinstance(v, abc.Collection) or all(map(item, v)))
        return iterable, "a list" + (f" of {plural(args[0])}" if args else "")
    if isinstance(hint, type):
        return (lambda v: isinstance(v, hint)), f"a {hint.__name__}"
    return (lambda v: True), str(hint)  # a hint this checker does not read: the library checks the value


def describe(hint: Any) -> str:
    return rule(hint)[1]


def plural(hint: Any) -> str:
    """'strings', 'lists of strings', 'values': what a container of `hint`s holds."""
    word = describe(hint)
    if word == "any value":
        return "values"
    for head in ("a list", "a mapping"):
        if word.startswith(head):
            return head[2:] + "s" + word[len(head):]  # the container is plural, not its items again
    if " or " in word or "(" in word:
        return word
    return re.sub(r"^an? (.*)$", r"\1s", word)


def _shown(value: Any) -> str:
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return text if value is None or isinstance(value, bool) else f"{type(value).__name__} {text}"


def check(value: Any, hint: Any, what: str) -> None:
    """Raise UserError unless `value` is of the annotated type `hint`; a mapping is checked item by item,
    the message naming the key (`axes['model.n_embd'] must be a list ...`)."""
    _bounded_ints(value, what)
    union = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    mapping = next((h for h in union if isinstance(typing.get_origin(h) or h, type)
                    and issubclass(typing.get_origin(h) or h, abc.Mapping)), None)
    if mapping is not None and isinstance(value, abc.Mapping):
        key_hint, value_hint = typing.get_args(mapping) or (Any, Any)
        for k, v in value.items():
            if not rule(key_hint)[0](k):
                raise UserError(f"{what} takes keys that are {plural(key_hint)}, got {_shown(k)}")
            if not rule(value_hint)[0](v):
                raise UserError(f"{what}[{k!r}] must be {describe(value_hint)}, got {_shown(v)}")
        return
    if not rule(hint)[0](value):
        words = [a for h in (hint, *typing.get_args(hint)) if typing.get_origin(h) is Literal
                 for a in typing.get_args(h) if isinstance(a, str)]
        near = did_you_mean(value, words).rstrip() if isinstance(value, str) and words else ""
        raise UserError(f"{what} must be {describe(hint)}, got {_shown(value)}" + (f"; {near}" if near else ""))


def _bounded_ints(value: Any, what: str, depth: int = 0) -> None:
    """An integer past MAX_INT_DIGITS (in a list or mapping too) is refused before str() of it fails."""
    if isinstance(value, int) and value.bit_length() > MAX_INT_DIGITS * 3.33:
        raise UserError(f"{what}: an integer of {int(value.bit_length() / 3.3219) + 1:,} digits is past what lrn "
                        f"takes (at most {MAX_INT_DIGITS} digits); write a smaller number")
    if depth < 3 and isinstance(value, list | tuple | set | frozenset | abc.Mapping):
        for v in value.values() if isinstance(value, abc.Mapping) else value:
            _bounded_ints(v, what, depth + 1)


def _hints(fn) -> tuple[dict[str, Any], bool]:
    """The annotations as types, and whether every class of LATE they name was loaded (one not loaded yet
    has no instance to check: a stand-in of its name takes its place, so `lrn cost` loads no torch)."""
    text = " ".join(str(a) for a in fn.__annotations__.values())
    named = {n: m for n, m in LATE.items() if n in text}
    late = {n: getattr(sys.modules[m], n) if m in sys.modules else type(n, (), {"__module__": m})
            for n, m in named.items()}
    hints = typing.get_type_hints(fn, fn.__globals__, late)
    hints.pop("return", None)
    return hints, all(m in sys.modules for m in named.values())


def checked(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` with its arguments checked against its annotations on every call (see the module's doc)."""
    sig = inspect.signature(fn)
    name = fn.__qualname__.replace(".__init__", "")
    final: list[dict[str, Any]] = []  # the hints, kept once they name only loaded classes

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        hints, loaded = (final[0], True) if final else _hints(fn)
        if loaded and not final:
            final.append(hints)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            text = str(e).split("() ", 1)[-1]  # "got an unexpected keyword argument 'outt'", without the name
            m = re.search(r"unexpected keyword argument '([^']*)'", text)
            near = did_you_mean(m[1], [p for p in sig.parameters if p != "self"]).rstrip() if m else ""
            raise UserError(f"{name}(): {text}" + (f"; {near}" if near else "")) from None
        for key, value in bound.arguments.items():
            kind, hint = sig.parameters[key].kind, hints.get(key, Any)
            if kind is inspect.Parameter.VAR_KEYWORD:
                for k, v in value.items():
                    check(v, hint, f"{name}(): {k}")
            elif kind is inspect.Parameter.VAR_POSITIONAL:
                for i, v in enumerate(value):
                    check(v, hint, f"{name}(): argument {i + 1} of {key}")
            elif key != "self":
                if isinstance(value, str) and not value.strip() and (key in BLANK or rule(hint)[0](Path("x"))):
                    raise UserError(f"{option(key)} is an empty string: give {BLANK.get(key, 'a path')}")
                check(value, hint, f"{name}(): {key}")
        return fn(*args, **kwargs)

    return call


def positive(value: int | None, what: str) -> None:
    """A count that must be at least 1 (None: not given)."""
    if value is not None and value < 1:
        raise UserError(f"{what} must be at least 1 (got {value})")
