"""Every argument of the public API checked against its annotation before any work: a wrong type
(or a choice outside a `Literal`) raises `UserError` with one line naming the function, the
argument, what it takes and what it got, as `lrn` says a bad option; values (ranges, names) are
checked by the library function each API function calls, whose errors name each setting as data
(lrngpt.errors.option): said here as the parameter (`minutes=25`), by `lrn` as its option.

    @checked
    def load(path: str | Path, checkpoint: Checkpoint = "last") -> Run: ...
    lrngpt.load(None)  # UserError: load(): path must be a path (str or Path), got None

The annotations are strings (`from __future__ import annotations`) that name classes imported
only for type checkers (RunConfig, Run, Sweep); they are resolved on a function's first call, so
decorating costs nothing at import and `import lrngpt` stays free of torch.
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


@runtime_checkable
class HasPath(Protocol):
    """A Run or a Sweep: anything with the path of its directory (a function may take either)."""
    path: Path


Split = Literal["val", "train"]
Context = Literal["window", "full"]
# the library's choices, as types (tests/test_api.py checks them against lrngpt.runconfig, lrngpt.explorer, ...)
MapMethod = Literal["pca", "tsne", "umap"]
Precision = Literal["float32", "float16", "int8"]
ExportFormat = Literal["tsv", "projector"]

# Names the annotations use that are imported only under TYPE_CHECKING: module that defines each
LATE = {"RunConfig": "lrngpt.runconfig.schema", "Run": "lrngpt.api.results", "Sweep": "lrngpt.api.sweeps",
        "Figure": "matplotlib.figure", "Tokenizer": "lrngpt.tokenizer.bpe"}
WORDS = {str: "a string", int: "an integer", float: "a number", bool: "True or False", type(None): "None",
         Path: "a path (str or Path)", dict: "a dict", list: "a list"}


def checked(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` with its arguments checked against its annotations on every call (see the module's doc)."""
    sig = inspect.signature(fn)
    name = fn.__qualname__.replace(".__init__", "")
    final: list[dict[str, Any]] = []  # the hints, kept once they name only loaded classes

    @functools.wraps(fn)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        if final:
            hints = final[0]
        else:
            hints, loaded = _hints(fn)
            if loaded:
                final.append(hints)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise UserError(f"{name}(): {_bind_error(e, sig)}") from None
        for key, value in bound.arguments.items():
            param = sig.parameters[key]
            hint = hints.get(key, Any)
            if key == "self":
                continue
            if param.kind is param.VAR_KEYWORD:
                for k, v in value.items():
                    check(v, hint, f"{name}(): {k}")
            elif param.kind is param.VAR_POSITIONAL:
                for i, v in enumerate(value):
                    check(v, hint, f"{name}(): argument {i + 1} of {key}")
            else:
                _not_blank(value, hint, key)
                check(value, hint, f"{name}(): {key}")
        return fn(*args, **kwargs)

    return call


def _hints(fn) -> tuple[dict[str, Any], bool]:
    """The annotations as types, and whether every class of LATE they name was loaded. A class whose
    module is not imported yet has no instance to check: a stand-in of its name takes its place (it
    names the class in the error), so `lrn cost mlp` (sweep: Sweep | str | Path) loads no torch."""
    text = " ".join(str(a) for a in fn.__annotations__.values())
    named = {n: m for n, m in LATE.items() if n in text}
    late = {n: getattr(sys.modules[m], n) if m in sys.modules else type(n, (), {"__module__": m})
            for n, m in named.items()}
    hints = typing.get_type_hints(fn, fn.__globals__, late)
    hints.pop("return", None)
    return hints, all(m in sys.modules for m in named.values())


def _bind_error(e: TypeError, sig: inspect.Signature) -> str:
    text = str(e).split("() ", 1)[-1]  # "got an unexpected keyword argument 'outt'", without the name
    m = re.search(r"unexpected keyword argument '([^']*)'", text)
    hint = did_you_mean(m[1], [p for p in sig.parameters if p != "self"]) if m else ""
    return text + (f"; {hint.rstrip()}" if hint else "")


# An empty string where a path or one of these is asked for names nothing (Path("") is the current directory)
BLANK = {"corpus": "a corpus such as stories:5MB or text:PATH", "device": "a device such as auto, cpu or cuda"}


def _not_blank(value: Any, hint: Any, key: str) -> None:
    if isinstance(value, str) and not value.strip() and (key in BLANK or matches(Path("x"), hint)):
        raise UserError(f"{option(key)} is an empty string: give {BLANK.get(key, 'a path')}")


def check(value: Any, hint: Any, what: str) -> None:
    """Raise UserError unless `value` is of the annotated type `hint`; a mapping where the hint takes one
    is checked item by item, the message naming the key (`axes['model.n_embd'] must be a list ...`)."""
    _bounded_ints(value, what)
    mapping = _mapping_hint(hint) if isinstance(value, abc.Mapping) else None
    if mapping is not None:
        key_hint, value_hint = typing.get_args(mapping) or (Any, Any)
        for k, v in value.items():
            if not matches(k, key_hint):
                raise UserError(f"{what} takes keys that are {_plural(key_hint)}, got {_shown(k)}")
            if not matches(v, value_hint):
                raise UserError(f"{what}[{k!r}] must be {describe(value_hint)}, got {_shown(v)}")
        return
    if not matches(value, hint):
        words = [a for h in (hint, *typing.get_args(hint)) if typing.get_origin(h) is Literal
                 for a in typing.get_args(h) if isinstance(a, str)]
        hint_ = did_you_mean(value, words).rstrip() if isinstance(value, str) and words else ""
        raise UserError(f"{what} must be {describe(hint)}, got {_shown(value)}" + (f"; {hint_}" if hint_ else ""))


def _bounded_ints(value: Any, what: str, depth: int = 0) -> None:
    """An integer past MAX_INT_DIGITS (in a list or mapping too) is no value of any argument: refused
    here, before `str()` of it fails (`Exceeds the limit (4300 digits)`) or a float of it overflows."""
    if isinstance(value, int) and value.bit_length() > MAX_INT_DIGITS * 3.33:
        raise UserError(f"{what}: an integer of {int(value.bit_length() / 3.3219) + 1:,} digits is past what lrn "
                        f"takes (at most {MAX_INT_DIGITS} digits); write a smaller number")
    if depth < 3 and isinstance(value, list | tuple | set | frozenset | abc.Mapping):
        for v in value.values() if isinstance(value, abc.Mapping) else value:
            _bounded_ints(v, what, depth + 1)


def _mapping_hint(hint: Any) -> Any:
    """The mapping type `hint` takes (itself, or one of its union), else None."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        return next((m for m in map(_mapping_hint, typing.get_args(hint)) if m is not None), None)
    if origin is typing.Annotated:
        return _mapping_hint(typing.get_args(hint)[0])
    mapping = origin if origin is not None else hint
    return hint if isinstance(mapping, type) and issubclass(mapping, abc.Mapping) else None


def matches(value: Any, hint: Any) -> bool:
    if hint is Any or hint is object:
        return True
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        return any(matches(value, a) for a in args)
    if origin is Literal:
        return any(value == a and type(value) is type(a) for a in args)
    if origin is typing.Annotated:
        return matches(value, args[0])
    if hint is None or hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is Path:
        return isinstance(value, os.PathLike)
    if origin in (abc.Callable, typing.Callable) or hint in (abc.Callable, typing.Callable):
        return callable(value)
    if origin is not None and isinstance(origin, type) and issubclass(origin, abc.Mapping):
        return isinstance(value, abc.Mapping) and (not args or all(
            matches(k, args[0]) and matches(v, args[1]) for k, v in value.items()))
    if origin is not None and isinstance(origin, type) and issubclass(origin, abc.Iterable):
        if isinstance(value, str | bytes) or not isinstance(value, abc.Iterable):
            return False
        if not isinstance(value, abc.Collection):
            return True  # an iterator: its items are checked where they are used (not consumed here)
        return not args or all(matches(v, args[0]) for v in value)
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True  # a hint this checker does not read: the library checks the value


def describe(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union or origin is types.UnionType:
        words = list(dict.fromkeys(describe(a) for a in args))
        if "a string" in words and "a path (str or Path)" in words:
            words.remove("a string")
        return ", ".join(words[:-1]) + f" or {words[-1]}" if len(words) > 1 else words[0]
    if origin is Literal:
        shown = [repr(a) for a in args]
        return "one of " + ", ".join(shown) if len(shown) > 1 else shown[0]
    if origin is typing.Annotated:
        return describe(args[0])
    if hint in WORDS:
        return WORDS[hint]
    if hint is Any or hint is object:
        return "any value"
    if hint is HasPath:
        return "a Run or a Sweep"
    if origin in (abc.Callable, typing.Callable) or hint in (abc.Callable, typing.Callable):
        return "a function"
    if origin is not None and isinstance(origin, type) and issubclass(origin, abc.Mapping):
        return "a mapping" + (f" of {_plural(args[0])} to {_plural(args[1])}" if args and args[1] is not Any else
                              f" with {_plural(args[0]).removesuffix('s')} keys" if args else "")
    if origin is not None and isinstance(origin, type) and issubclass(origin, abc.Iterable):
        return "a list" + (f" of {_plural(args[0])}" if args else "")
    if isinstance(hint, type):
        return f"a {hint.__name__}"
    return str(hint)


def _plural(hint: Any) -> str:
    """'strings', 'lists of strings', 'values': what a container of `hint`s holds."""
    if hint is Any or hint is object:
        return "values"
    word = describe(hint)
    for head in ("a list", "a mapping"):
        if word.startswith(head):
            return head[2:] + "s" + word[len(head):]  # the container is plural, not its items again
    for article in ("an ", "a "):
        if word.startswith(article):
            return word[len(article):] + "s" if " or " not in word and "(" not in word else word
    return word


def _shown(value: Any) -> str:
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return text if value is None or isinstance(value, bool) else f"{type(value).__name__} {text}"


def positive(value: int | None, what: str) -> None:
    """A count that must be at least 1 (None: not given)."""
    if value is not None and value < 1:
        raise UserError(f"{what} must be at least 1 (got {value})")
