"""The version of kvopt (one place; ``kvopt.__version__`` re-exports it)."""

__version__ = "0.2.0"
