"""FAKE conan.errors, for tests only (see conan/__init__.py)."""


class ConanException(Exception):
    pass


class ConanInvalidConfiguration(ConanException):
    pass


class ConanInvalidOption(ConanException):
    pass
