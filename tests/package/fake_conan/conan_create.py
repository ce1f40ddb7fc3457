"""FAKE `conan create`, for tests only: runs llmgate's real conanfile.py
against the fake Conan package beside this script (see conan/__init__.py)
in the order Conan would, then writes the CMake config that Conan's CMakeDeps
would generate from package_info(), so a consumer can find_package(llmgate).

usage: conan_create.py <recipe folder> <work folder>
Writes <work>/export (the exported sources), <work>/package (the package)
and <work>/generators (the CMake config for CMAKE_PREFIX_PATH).
"""
import fnmatch
import importlib.util
import os
import platform
import shutil
import sys

# The fake package beside this script, never a real Conan installed elsewhere;
# no __pycache__ left in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True

from conan import ConanFile  # noqa: E402
from conan.errors import ConanInvalidConfiguration  # noqa: E402

# CMakeDeps would read these from the dependencies' own package_info(); the
# fake maps each requirement to the system package the build tree uses: how
# to find it, as llmgate's own CMakeLists.txt does, and the targets to link.
SYSTEM_PACKAGES = {
    # Debian's xsimd names "xtl" as a link dependency without finding it.
    "xsimd": (["find_package(xtl CONFIG QUIET)", "find_dependency(xsimd CONFIG)"], ["xsimd"]),
    "boost": (["find_dependency(Boost CONFIG COMPONENTS headers)"], ["Boost::headers"]),
    "openssl": (["find_dependency(OpenSSL)"], ["OpenSSL::SSL", "OpenSSL::Crypto"]),
    # Debian's libxxhash-dev ships only the header and a pkg-config file.
    "xxhash": (["find_path(LLMGATE_XXHASH_INCLUDE_DIR xxhash.h REQUIRED)"], []),
}


def fail(message):
    sys.exit(f"conan_create.py: {message}")


def load_recipe(folder):
    spec = importlib.util.spec_from_file_location("conanfile", os.path.join(folder, "conanfile.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    recipes = [c for c in vars(module).values()
               if isinstance(c, type) and issubclass(c, ConanFile) and c is not ConanFile]
    if len(recipes) != 1:
        fail(f"expected one ConanFile subclass, found {len(recipes)}")
    return recipes[0]


def settings(cppstd):
    return {"os": platform.system(), "arch": platform.machine(), "compiler": "gcc",
            "compiler.cppstd": cppstd, "build_type": "Release"}


def export_sources(recipe, recipe_folder, export_folder):
    """Copies what exports_sources names, as `conan export` does: package()
    later sees only these files."""
    patterns = recipe.exports_sources
    patterns = [patterns] if isinstance(patterns, str) else list(patterns)
    for root, dirs, files in os.walk(recipe_folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            relative = os.path.relpath(os.path.join(root, name), recipe_folder).replace(os.sep, "/")
            if any(fnmatch.fnmatch(relative, p) for p in patterns):
                target = os.path.join(export_folder, relative)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copy2(os.path.join(root, name), target)


def write_cmake_config(conanfile, generators_folder):
    """The essence of what CMakeDeps writes for a single-component package."""
    info = conanfile.cpp_info
    file_name = info.get_property("cmake_file_name") or conanfile.name
    target = info.get_property("cmake_target_name") or f"{conanfile.name}::{conanfile.name}"
    lines = [
        "# Written by the FAKE conan_create.py (tests/package/fake_conan) as CMakeDeps",
        f"# would from {conanfile.name}'s package_info().",
        "include(CMakeFindDependencyMacro)",
    ]
    links = []
    for reference, _ in conanfile.requirements_declared:
        name = reference.split("/")[0]
        if name not in SYSTEM_PACKAGES:
            fail(f"no system package known for requirement {reference}; add it to SYSTEM_PACKAGES")
        finds, targets = SYSTEM_PACKAGES[name]
        lines += finds
        links += targets
    links += info.system_libs
    includes = [os.path.join(conanfile.package_folder, d).replace(os.sep, "/") for d in info.includedirs]
    lines += [
        f"if(NOT TARGET {target})",
        f"  add_library({target} INTERFACE IMPORTED)",
        f"  set_target_properties({target} PROPERTIES",
        f"    INTERFACE_INCLUDE_DIRECTORIES \"{';'.join(includes)}\"",
        f"    INTERFACE_LINK_LIBRARIES \"{';'.join(links)}\")",
        "endif()",
    ]
    os.makedirs(generators_folder, exist_ok=True)
    with open(os.path.join(generators_folder, f"{file_name}-config.cmake"), "w") as out:
        out.write("\n".join(lines) + "\n")


def main(recipe_folder, work_folder):
    recipe = load_recipe(recipe_folder)
    if recipe.package_type != "header-library":
        fail(f"package_type is {recipe.package_type!r}, llmgate is a header-library")

    # validate() must refuse a standard older than C++20 ...
    try:
        recipe(settings("17")).validate()
        fail("validate() accepted compiler.cppstd=17")
    except ConanInvalidConfiguration:
        pass
    # ... and the rest runs as `conan create . -s compiler.cppstd=20` would.
    conanfile = recipe(settings("20"))
    export_folder = os.path.join(work_folder, "export")
    export_sources(recipe, recipe_folder, export_folder)
    conanfile.requirements()
    conanfile.layout()
    conanfile.validate()
    conanfile.package_id()
    if conanfile.info.settings:
        fail("package_id() left settings in the package id; a header-only package has one id")

    conanfile.source_folder = os.path.join(export_folder, conanfile.folders.source)
    conanfile.package_folder = os.path.join(work_folder, "package")
    conanfile.package()
    conanfile.package_info()

    # ConanCenter's layout for a header-only package: headers and licenses only.
    contents = sorted(os.listdir(conanfile.package_folder))
    if contents != ["include", "licenses"]:
        fail(f"package holds {contents}, expected ['include', 'licenses']")
    if conanfile.cpp_info.libdirs or conanfile.cpp_info.bindirs:
        fail("a header-library declares no libdirs or bindirs")

    write_cmake_config(conanfile, os.path.join(work_folder, "generators"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]))
