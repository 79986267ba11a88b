"""The player's exception (pure module)."""


class PlayerError(ValueError):
    """A command refused; the message says what was wrong and with which value."""
