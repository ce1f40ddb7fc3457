"""FAKE conan.tools.build, for tests only (see conan/__init__.py)."""
from conan.errors import ConanException, ConanInvalidConfiguration


def _year(cppstd):
    number = int(str(cppstd).removeprefix("gnu"))
    return 1900 + number if number >= 98 else 2000 + number


def check_min_cppstd(conanfile, cppstd):
    current = conanfile.settings.get_safe("compiler.cppstd")
    if current is None:
        # Real Conan falls back on the compiler's default standard here.
        raise ConanException("the fake check_min_cppstd needs compiler.cppstd")
    if _year(current) < _year(cppstd):
        raise ConanInvalidConfiguration(
            f"Current cppstd ({current}) is lower than the required C++ standard ({cppstd}).")
