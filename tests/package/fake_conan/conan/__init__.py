"""FAKE Conan, for tests only: the small part of Conan 2's Python API that
llmgate's conanfile.py uses. Conan is neither installed nor reachable here,
so conan_create.py runs the real recipe against these stand-ins. Each does
what Conan does for this recipe and no more.
"""
from conan.errors import ConanInvalidOption


class _Folders:
    """conanfile.folders: where layout() says the sources are."""

    def __init__(self):
        self.source = "."


class _Component:
    """One cpp_info.components[name] (or the root cpp_info), with Conan's defaults."""

    def __init__(self):
        self.includedirs = ["include"]
        self.libdirs = ["lib"]
        self.bindirs = ["bin"]
        self.system_libs = []
        self.requires = []
        self._properties = {}

    def set_property(self, name, value):
        self._properties[name] = value

    def get_property(self, name):
        return self._properties.get(name)


class _CppInfo(_Component):
    """conanfile.cpp_info: what package_info() tells consumers. Reading
    components[name] declares that component, as in Conan."""

    def __init__(self):
        super().__init__()
        self.components = _Components()


class _Components(dict):
    def __missing__(self, name):
        self[name] = _Component()
        return self[name]


class Options:
    """conanfile.options: the values of the options the recipe declares
    (default_options, or what `-o` set), read as attributes."""

    def __init__(self, declared, defaults, values):
        self._values = {}
        for name, allowed in declared.items():
            value = values.get(name, defaults.get(name))
            if value not in allowed:
                raise ConanInvalidOption(f"'{value}' is not a valid 'options.{name}' value; "
                                         f"possible values are {allowed}")
            self._values[name] = value
        unknown = set(values) - set(declared)
        if unknown:
            raise ConanInvalidOption(f"the recipe has no options {sorted(unknown)}")

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name not in self._values:
            raise ConanInvalidOption(f"option '{name}' doesn't exist")
        return self._values[name]

    def items(self):
        return list(self._values.items())


class _Info:
    """conanfile.info: what the package id is computed from."""

    def __init__(self, settings, options):
        self.settings = dict(settings)
        self.options = dict(options)

    def clear(self):
        self.settings = {}
        self.options = {}


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
    options = {}
    default_options = {}
    exports_sources = ()

    def __init__(self, settings_values, option_values=None):
        self.settings = Settings(type(self).settings, settings_values)
        self.options = Options(type(self).options, type(self).default_options, option_values or {})
        self.folders = _Folders()
        self.cpp_info = _CppInfo()
        self.info = _Info(self.settings.items(), self.options.items())
        self.requirements_declared = []  # (reference, traits), in order
        self.source_folder = None
        self.package_folder = None

    def requires(self, reference, **traits):
        self.requirements_declared.append((reference, traits))
