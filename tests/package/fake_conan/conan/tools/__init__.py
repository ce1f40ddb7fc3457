"""FAKE conan.tools, for tests only (see conan/__init__.py)."""
