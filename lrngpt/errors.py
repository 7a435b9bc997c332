"""The one exception type that means "the user asked for something we cannot do".

The command line turns a UserError into exit code 2 and one line on stderr; anything
else is unexpected and exits 1. Library code raises it with a message that says what is
wrong and how to fix it.
"""


class UserError(Exception):
    """Bad input: a wrong path, value, config key or state. Exit code 2."""


class BudgetTooShort(UserError):
    """A time budget too short for the smallest plan here; `smallest` is the budget (minutes) that fits,
    so a caller that gave it a share of its own budget can name the whole budget that would."""

    def __init__(self, message: str, smallest: float):
        super().__init__(message)
        self.smallest = smallest
