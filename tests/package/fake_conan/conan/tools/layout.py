"""FAKE conan.tools.layout, for tests only (see conan/__init__.py)."""


def basic_layout(conanfile, src_folder="."):
    conanfile.folders.source = src_folder
