"""The one error type the command line turns into a single readable line."""


class UserError(Exception):
    """Reports bad input or a missing resource in words a person can act on.

    The command line prints ``str(error)`` on one line and exits with status 2,
    never a traceback.
    """
