"""The one error type a user can cause, bad input told in one line, and how any error
is told in one line."""


class PosvizInputError(ValueError):
    """Input that cannot be computed (bad text, order, configuration or model folder).

    The message is one readable line meant for the user: the GUI shows it next to the
    field, the command line prints it and exits with status 2.
    """


class Cancelled(Exception):
    """A computation stopped early because a newer request superseded it."""


def one_line(error: BaseException, width: int = 200) -> str:
    """The first line of an error's message (its type's name if it has none), at most
    ``width`` characters: short enough for a status line."""
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:width]
