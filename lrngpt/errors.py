"""The one exception type that means "the user asked for something we cannot do".

The command line turns a UserError into exit code 2 and one line on stderr; anything
else is unexpected and exits 1. Library code raises it with a message that says what is
wrong and how to fix it.
"""


class UserError(Exception):
    """Bad input: a wrong path, value, config key or state. Exit code 2."""
