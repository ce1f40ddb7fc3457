# Conan 2 recipe for llmgate, in the shape of ConanCenter's header-only
# recipes (nlohmann_json, xsimd): no build step, one package for every
# configuration, the CMake target names users know from find_package.
#   conan create . --build=missing -s compiler.cppstd=20
# Two components, as the CMake package has: "core" (llmgate::core: vector
# core, embedders, caches) and "llmgate" (llmgate::llmgate: everything).
# The option server=False (-o "llmgate/*:server=False") leaves out the
# second and with it the OpenSSL requirement; Boost is needed either way
# (its headers), Boost.JSON only by llmgate::llmgate. The option redis=True
# adds a third, "redis" (llmgate::redis: the shared cache tier), and hiredis;
# eval=True a fourth, "eval" (llmgate::eval: the evaluation kit), and SQLite.
import os

from conan import ConanFile
from conan.errors import ConanInvalidConfiguration
from conan.tools.build import check_min_cppstd
from conan.tools.files import copy
from conan.tools.layout import basic_layout

required_conan_version = ">=2.0"


class LlmgateConan(ConanFile):
    name = "llmgate"
    version = "0.1.0"
    description = "Header-only C++20 library that makes LLM applications cheaper and faster"
    license = "MIT"
    url = "https://github.com/llmgate/llmgate"
    homepage = "https://github.com/llmgate/llmgate"
    topics = ("llm", "semantic-cache", "routing", "header-only")
    package_type = "header-library"
    settings = "os", "arch", "compiler", "build_type"
    options = {"server": [True, False], "redis": [True, False], "eval": [True, False]}
    default_options = {"server": True, "redis": False, "eval": False}
    # The recipe lives in the repository, so the sources travel with it.
    exports_sources = "include/*", "LICENSE"
    no_copy_source = True

    def layout(self):
        basic_layout(self)

    def requirements(self):
        # llmgate's public headers include these, so consumers need their headers too.
        self.requires("xsimd/[>=8.1 <14]", transitive_headers=True)
        self.requires("boost/[>=1.81 <2]", transitive_headers=True)
        self.requires("xxhash/[>=0.8.1 <1]", transitive_headers=True)
        if self.options.server:
            self.requires("openssl/[>=3 <4]", transitive_headers=True)
        if self.options.redis:
            self.requires("hiredis/[>=1.0 <2]", transitive_headers=True)
        if self.options.eval:
            self.requires("sqlite3/[>=3.35 <4]", transitive_headers=True)

    def package_id(self):
        # The same headers whatever the option: it only changes package_info().
        self.info.clear()

    def validate(self):
        check_min_cppstd(self, 20)
        if self.options.redis and not self.options.server:
            raise ConanInvalidConfiguration("llmgate's redis option needs server=True (the tier is part of the gateway)")
        if self.options.eval and not self.options.server:
            raise ConanInvalidConfiguration("llmgate's eval option needs server=True (the kit asks model servers "
                                            "through the backends)")

    def package(self):
        # The same files llmgate's CMake install rules put under include/.
        copy(self, "LICENSE", self.source_folder, os.path.join(self.package_folder, "licenses"))
        copy(self, "*.hpp", os.path.join(self.source_folder, "include"),
             os.path.join(self.package_folder, "include"))

    def package_info(self):
        self.cpp_info.set_property("cmake_file_name", "llmgate")
        # The root target is the most a consumer can link: what
        # find_package(llmgate) without components gives in a CMake install.
        root = "llmgate::llmgate" if self.options.server else "llmgate::core"
        self.cpp_info.set_property("cmake_target_name", root)

        core = self.cpp_info.components["core"]
        core.set_property("cmake_target_name", "llmgate::core")
        core.requires = ["xsimd::xsimd", "boost::headers", "xxhash::libxxhash"]
        core.bindirs = []
        core.libdirs = []
        # The CMake target links Threads::Threads.
        if self.settings.os in ("Linux", "FreeBSD"):
            core.system_libs = ["pthread"]

        if self.options.server:
            full = self.cpp_info.components["llmgate"]
            full.set_property("cmake_target_name", "llmgate::llmgate")
            full.requires = ["core", "boost::json", "openssl::ssl", "openssl::crypto"]
            full.bindirs = []
            full.libdirs = []

        if self.options.redis:
            redis = self.cpp_info.components["redis"]
            redis.set_property("cmake_target_name", "llmgate::redis")
            redis.requires = ["llmgate", "hiredis::hiredis"]
            redis.bindirs = []
            redis.libdirs = []

        if self.options.eval:
            evaluation = self.cpp_info.components["eval"]
            evaluation.set_property("cmake_target_name", "llmgate::eval")
            evaluation.requires = ["llmgate", "sqlite3::sqlite3"]
            evaluation.bindirs = []
            evaluation.libdirs = []
