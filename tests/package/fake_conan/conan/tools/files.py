"""FAKE conan.tools.files, for tests only (see conan/__init__.py)."""
import fnmatch
import os
import shutil


def copy(conanfile, pattern, src, dst, keep_path=True):
    """Copies the files under src whose path relative to src matches pattern
    (fnmatch, `*` crossing folders, as in Conan); returns the copied paths."""
    copied = []
    for root, _, files in os.walk(src):
        for name in files:
            relative = os.path.relpath(os.path.join(root, name), src)
            if not fnmatch.fnmatch(relative.replace(os.sep, "/"), pattern):
                continue
            target = os.path.join(dst, relative if keep_path else name)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copy2(os.path.join(root, name), target)
            copied.append(target)
    return copied
