"""User-facing errors: the CLI prints their message as `Error: ...` and exits 1, without a traceback."""


class LocalevalError(Exception):
    """Base class for every error caused by the user's input, files or setup."""


class ModelFileError(LocalevalError):
    """A model file is missing, not GGUF, truncated, or fails its checksum."""


class DatasetError(LocalevalError):
    """A dataset file cannot be read at all (bad rows are reported per row instead)."""


class PromptFileError(LocalevalError):
    """A prompt file is malformed or its examples break the step's schema."""


class ConfigError(LocalevalError):
    """An option value is invalid (unknown metric, bad --map, ...)."""
