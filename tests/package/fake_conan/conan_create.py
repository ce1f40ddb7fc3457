"""FAKE `conan create`, for tests only: runs llmgate's real conanfile.py
against the fake Conan package beside this script (see conan/__init__.py)
in the order Conan would, then writes the CMake config that Conan's CMakeDeps
would generate from package_info(), so a consumer can find_package(llmgate).

usage: conan_create.py <recipe folder> <work folder> [<option>=<value>...]
as `conan create <recipe folder> -o "llmgate/*:<option>=<value>"...`.
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
# fake maps each component a recipe may require (ConanCenter's names:
# "<package>::<component>", "<package>::<package>" for a package without
# components) to the system package the build tree uses: how to find it, as
# llmgate's own CMakeLists.txt does, and the targets to link. The generated
# config finds, for each requirement, the components llmgate uses (real
# CMakeDeps finds the whole dependency, which Conan has installed).
SYSTEM_COMPONENTS = {
    # Debian's xsimd names "xtl" as a link dependency without finding it.
    "xsimd::xsimd": (["find_package(xtl CONFIG QUIET)", "find_dependency(xsimd CONFIG)"], ["xsimd"]),
    "boost::headers": (["find_dependency(Boost CONFIG COMPONENTS headers)"], ["Boost::headers"]),
    "boost::json": (["find_dependency(Boost CONFIG COMPONENTS json)"], ["Boost::json"]),
    "openssl::ssl": (["find_dependency(OpenSSL)"], ["OpenSSL::SSL"]),
    "openssl::crypto": (["find_dependency(OpenSSL)"], ["OpenSSL::Crypto"]),
    # Debian's libxxhash-dev ships only the header and a pkg-config file.
    "xxhash::libxxhash": (["find_path(LLMGATE_XXHASH_INCLUDE_DIR xxhash.h REQUIRED)"], []),
    # Debian's libhiredis-dev has no CMake package with targets, only
    # hiredis.pc; ConanCenter's hiredis names its target hiredis::hiredis,
    # which is what the generated config links, as CMakeDeps' would.
    "hiredis::hiredis": (["find_dependency(PkgConfig)",
                          "pkg_check_modules(FAKE_CONAN_HIREDIS REQUIRED IMPORTED_TARGET hiredis)",
                          "if(NOT TARGET hiredis::hiredis)\n"
                          "  add_library(hiredis::hiredis INTERFACE IMPORTED)\n"
                          "  set_property(TARGET hiredis::hiredis PROPERTY\n"
                          "    INTERFACE_LINK_LIBRARIES PkgConfig::FAKE_CONAN_HIREDIS)\n"
                          "endif()"],
                         ["hiredis::hiredis"]),
    # ConanCenter's sqlite3 names its target SQLite::SQLite3, as CMake's
    # FindSQLite3 module does for Debian's libsqlite3-dev.
    "sqlite3::sqlite3": (["find_dependency(SQLite3)"], ["SQLite::SQLite3"]),
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


def check_components(conanfile):
    """What Conan checks of a package_info() with components: every
    requirement is used by some component, every "dep::component" names a
    requirement and every other name a component of this package. Returns
    the components in an order where each comes after those it requires."""
    components = conanfile.cpp_info.components
    required = {reference.split("/")[0] for reference, _ in conanfile.requirements_declared}
    used = set()
    for name, component in components.items():
        for requirement in component.requires:
            if "::" in requirement:
                package = requirement.split("::")[0]
                if package not in required:
                    fail(f"component '{name}' requires '{requirement}', but '{package}' "
                         "is not a requirement of the recipe")
                used.add(package)
            elif requirement not in components:
                fail(f"component '{name}' requires '{requirement}', which is not a component")
    for package in sorted(required - used):
        fail(f"required package '{package}' not in component 'requires'")
    ordered = []
    def visit(name, path):
        if name in path:
            fail(f"components require each other in a cycle: {path + [name]}")
        if name not in ordered:
            for requirement in components[name].requires:
                if "::" not in requirement:
                    visit(requirement, path + [name])
            ordered.append(name)
    for name in components:
        visit(name, [])
    return ordered


def write_cmake_config(conanfile, generators_folder):
    """The essence of what CMakeDeps writes: one target per component (or
    one for the package) and the root target linking every component."""
    info = conanfile.cpp_info
    file_name = info.get_property("cmake_file_name") or conanfile.name
    root = info.get_property("cmake_target_name") or f"{conanfile.name}::{conanfile.name}"
    lines = [
        "# Written by the FAKE conan_create.py (tests/package/fake_conan) as CMakeDeps",
        f"# would from {conanfile.name}'s package_info().",
        "include(CMakeFindDependencyMacro)",
    ]

    def target_of(component_name):
        return (info.components[component_name].get_property("cmake_target_name")
                or f"{conanfile.name}::{component_name}")

    def external(requirement):
        if requirement not in SYSTEM_COMPONENTS:
            fail(f"no system package known for {requirement}; add it to SYSTEM_COMPONENTS")
        return SYSTEM_COMPONENTS[requirement]

    def add_target(target, component, links):
        includes = [os.path.join(conanfile.package_folder, d).replace(os.sep, "/")
                    for d in component.includedirs]
        return [
            f"if(NOT TARGET {target})",
            f"  add_library({target} INTERFACE IMPORTED)",
            "endif()",
            f"set_property(TARGET {target} APPEND PROPERTY",
            f"  INTERFACE_INCLUDE_DIRECTORIES \"{';'.join(includes)}\")",
            f"set_property(TARGET {target} APPEND PROPERTY",
            f"  INTERFACE_LINK_LIBRARIES \"{';'.join(links + component.system_libs)}\")",
        ]

    finds = []
    targets = []
    if info.components:
        for name in check_components(conanfile):
            for requirement in info.components[name].requires:
                if "::" in requirement:
                    finds += [f for f in external(requirement)[0] if f not in finds]
        for name in check_components(conanfile):
            component = info.components[name]
            links = []
            for requirement in component.requires:
                links += external(requirement)[1] if "::" in requirement else [target_of(requirement)]
            targets += add_target(target_of(name), component, links)
        # The root target aggregates every component (itself too, when a
        # component has its name, as CMakeDeps does).
        targets += [f"if(NOT TARGET {root})", f"  add_library({root} INTERFACE IMPORTED)", "endif()"]
        for name in check_components(conanfile):
            targets.append(f"set_property(TARGET {root} APPEND PROPERTY INTERFACE_LINK_LIBRARIES {target_of(name)})")
    else:
        links = []
        for reference, _ in conanfile.requirements_declared:
            requirement = "{0}::{0}".format(reference.split("/")[0])
            finds += [f for f in external(requirement)[0] if f not in finds]
            links += external(requirement)[1]
        targets += add_target(root, info, links)
    lines += finds + targets
    os.makedirs(generators_folder, exist_ok=True)
    with open(os.path.join(generators_folder, f"{file_name}-config.cmake"), "w") as out:
        out.write("\n".join(lines) + "\n")


def parse_options(arguments):
    """name=value pairs as `-o` gives them; True/False become booleans."""
    options = {}
    for argument in arguments:
        name, sep, value = argument.partition("=")
        if not sep:
            fail(f"expected <option>=<value>, got {argument!r}")
        options[name] = {"True": True, "False": False}.get(value, value)
    return options


def main(recipe_folder, work_folder, options):
    recipe = load_recipe(recipe_folder)
    if recipe.package_type != "header-library":
        fail(f"package_type is {recipe.package_type!r}, llmgate is a header-library")

    # validate() must refuse a standard older than C++20 ...
    try:
        recipe(settings("17"), options).validate()
        fail("validate() accepted compiler.cppstd=17")
    except ConanInvalidConfiguration:
        pass
    # ... and the rest runs as `conan create . -s compiler.cppstd=20` would.
    conanfile = recipe(settings("20"), options)
    export_folder = os.path.join(work_folder, "export")
    export_sources(recipe, recipe_folder, export_folder)
    conanfile.requirements()
    conanfile.layout()
    try:
        conanfile.validate()
    except ConanInvalidConfiguration as invalid:
        # What `conan create` says of a configuration the recipe refuses.
        sys.exit(f"ERROR: There are invalid packages:\n"
                 f"{conanfile.name}/{conanfile.version}: Invalid: {invalid}")
    conanfile.package_id()
    if conanfile.info.settings or conanfile.info.options:
        fail("package_id() left settings or options in the package id; "
             "a header-only package has one id")

    conanfile.source_folder = os.path.join(export_folder, conanfile.folders.source)
    conanfile.package_folder = os.path.join(work_folder, "package")
    conanfile.package()
    conanfile.package_info()

    # ConanCenter's layout for a header-only package: headers and licenses only.
    contents = sorted(os.listdir(conanfile.package_folder))
    if contents != ["include", "licenses"]:
        fail(f"package holds {contents}, expected ['include', 'licenses']")
    for name, info in conanfile.cpp_info.components.items() or [("(root)", conanfile.cpp_info)]:
        if info.libdirs or info.bindirs:
            fail(f"{name}: a header-library declares no libdirs or bindirs")

    write_cmake_config(conanfile, os.path.join(work_folder, "generators"))


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), parse_options(sys.argv[3:]))
