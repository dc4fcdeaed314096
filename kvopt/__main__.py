"""``python -m kvopt …`` is the ``kvopt`` command."""

from .cli import entry

entry()
