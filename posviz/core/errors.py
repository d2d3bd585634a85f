"""The one error type a user can cause: bad input, told in one line."""


class PosvizInputError(ValueError):
    """Input that cannot be computed (bad text, order, configuration or model folder).

    The message is one readable line meant for the user: the GUI shows it next to the
    field, the command line prints it and exits with status 2.
    """


class Cancelled(Exception):
    """A computation stopped early because a newer request superseded it."""
