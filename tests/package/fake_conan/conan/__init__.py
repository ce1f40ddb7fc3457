"""FAKE Conan, for tests only: the small part of Conan 2's Python API that
llmgate's conanfile.py uses. Conan is neither installed nor reachable here,
so conan_create.py runs the real recipe against these stand-ins. Each does
what Conan does for this recipe and no more.
"""


class _Folders:
    """conanfile.folders: where layout() says the sources are."""

    def __init__(self):
        self.source = "."


class _CppInfo:
    """conanfile.cpp_info: what package_info() tells consumers, with Conan's defaults."""

    def __init__(self):
        self.includedirs = ["include"]
        self.libdirs = ["lib"]
        self.bindirs = ["bin"]
        self.system_libs = []
        self._properties = {}

    def set_property(self, name, value):
        self._properties[name] = value

    def get_property(self, name):
        return self._properties.get(name)


class _Info:
    """conanfile.info: what the package id is computed from."""

    def __init__(self, settings):
        self.settings = dict(settings)

    def clear(self):
        self.settings = {}


class Settings:
    """conanfile.settings: only the settings the recipe declares can be read."""

    def __init__(self, declared, values):
        self._declared = set(declared)
        self._values = values

    def get_safe(self, name, default=None):
        return self._values.get(name, default) if name.split(".")[0] in self._declared else default

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._declared:
            raise AttributeError(f"'settings.{name}' is not declared by the recipe")
        return self._values[name]

    def items(self):
        return [(k, v) for k, v in self._values.items() if k.split(".")[0] in self._declared]


class ConanFile:
    package_type = None
    settings = ()
    exports_sources = ()

    def __init__(self, settings_values):
        self.settings = Settings(type(self).settings, settings_values)
        self.folders = _Folders()
        self.cpp_info = _CppInfo()
        self.info = _Info(self.settings.items())
        self.requirements_declared = []  # (reference, traits), in order
        self.source_folder = None
        self.package_folder = None

    def requires(self, reference, **traits):
        self.requirements_declared.append((reference, traits))
