"""UserError, the one exception meaning "the user asked for something we cannot do" (exit code 2, one
line saying the fix). A setting it names is given as data, `option(name, value)`: `lrn` says it as its
flag (`--minutes 25`), the API as its parameter (`minutes=25`), each at its own front door.
"""

from __future__ import annotations

import re

_OPEN, _SEP, _CLOSE = "\ue000", "\ue001", "\ue002"  # (private-use characters: no message holds them)
_OPTION = re.compile(f"{_OPEN}([a-z][a-z0-9_]*){_SEP}([^{_CLOSE}]*){_CLOSE}")
_UNSET = object()


def option(name: str, value: object = _UNSET) -> str:
    """The setting `name` (the API's parameter name), with the value the user gave or should give, as
    a part of a message: `f"{option('minutes', 0)} is too short"`."""
    shown = "" if value is _UNSET else "\x00True" if value is True else "\x00False" if value is False else str(value)
    return f"{_OPEN}{name}{_SEP}{shown}{_CLOSE}"


def in_words(text: str, cli: bool) -> str:
    """`text` with each option said as `lrn`'s flag (`cli`) or as the API's parameter."""
    if _OPEN not in text:  # most lines name none (every log line passes through here)
        return text

    def say(m: re.Match) -> str:
        name, value = m[1], m[2]
        if not cli:
            return name if not value else f"{name}={value.lstrip(chr(0))}"
        flag = "--" + name.replace("_", "-")
        if value == "\x00False":
            return f"--no-{flag[2:]}"
        return flag if not value or value == "\x00True" else f"{flag} {value}"

    return _OPTION.sub(say, text)


class UserError(Exception):
    """Bad input: a wrong path, value, config key or state. Exit code 2. `str()` says it in the API's
    words, `words(cli=True)` in `lrn`'s; `options` are the settings it names."""

    @property
    def text(self) -> str:
        """The message with its options as data: what a handler that wraps it in a message of its own keeps."""
        return str(self.args[0]) if self.args else ""

    def words(self, cli: bool) -> str:
        return in_words(self.text, cli)

    def __str__(self) -> str:
        return self.words(cli=False)

    @property
    def options(self) -> list[str]:
        """The settings the message names, as the API's parameter names (a caller can point at them)."""
        return [m[0] for m in _OPTION.findall(self.text)]


class BudgetTooShort(UserError):
    """A time budget too short for the smallest plan here; `smallest` is the budget (minutes) that fits,
    so a caller that gave it a share of its own budget can name the whole budget that would."""

    def __init__(self, message: str, smallest: float):
        super().__init__(message)
        self.smallest = smallest
