// schema_sources: where a schema's <module src="..."> files may be read
// from, and the reading itself.
//
// A schema can come from someone who must not read the host's files: a
// gateway's admin POSTs schemas, and every tenant's prompt may import their
// modules. So src names a file inside one directory and nowhere else: a
// relative path with no way out (no "..", no absolute path, no symbolic
// link that leads outside), a regular file, at most max_bytes. A path that
// leaves the directory is refused by its spelling alone, before the file
// system is asked, and a link that leads outside reads as a missing file:
// neither error tells whether something exists outside.
#pragma once

#include <algorithm>     // std::mismatch, std::min
#include <cstdint>       // std::uintmax_t
#include <filesystem>    // std::filesystem::path, canonical, is_regular_file, file_size
#include <fstream>       // std::ifstream
#include <ios>           // std::ios_base::failure
#include <string>        // std::string, std::to_string
#include <system_error>  // std::error_code

#include "llmgate/prompt/pml_error.hpp"  // pml_error, source_position
#include "llmgate/version.hpp"           // the inline versioned namespace

namespace llmgate::inline v0 {

struct schema_sources {
  /// The directory src paths are relative to and stay inside; empty: a
  /// schema may not use src at all.
  std::filesystem::path directory = {};
  /// The largest src file read.
  std::uintmax_t max_bytes = std::uintmax_t{1} << 20;
};

namespace detail {

// Whether `path` is `directory` or below it (both canonical).
inline bool pml_path_within(const std::filesystem::path& path, const std::filesystem::path& directory) {
  return std::mismatch(directory.begin(), directory.end(), path.begin(), path.end()).first == directory.end();
}

// The bytes of `src`, a file under `sources.directory`; `at` is where the
// src attribute is, for the error.
inline std::string read_schema_source_bytes(const schema_sources& sources, const std::string& src, source_position at) {
  if (sources.directory.empty())
    throw pml_error(at, "src=\"" + src + "\" cannot be used here: no directory is configured for this schema's src files");
  const std::filesystem::path relative = std::filesystem::path(src).lexically_normal();
  if (src.empty() || relative.has_root_name() || relative.has_root_directory() ||
      (!relative.empty() && *relative.begin() == ".."))
    throw pml_error(at, "the src file \"" + src + "\" is outside the directory of this schema's src files");
  const std::filesystem::path shown = sources.directory / relative;
  const auto unreadable = [&] { return pml_error(at, "cannot read the src file \"" + src + "\" (" + shown.string() + ")"); };
  std::error_code ec;
  const auto directory = std::filesystem::canonical(sources.directory, ec);
  if (ec) throw unreadable();
  const auto path = std::filesystem::canonical(directory / relative, ec);
  // Not a directory, nor a device that never ends; nothing a link leads to outside.
  if (ec || !pml_path_within(path, directory) || !std::filesystem::is_regular_file(path, ec)) throw unreadable();
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw unreadable();
  const auto too_large = [&] {
    return pml_error(at, "the src file \"" + src + "\" is larger than the " + std::to_string(sources.max_bytes) +
                             " bytes allowed");
  };
  if (size > sources.max_bytes) throw too_large();
  std::string bytes;
  try {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw unreadable();
    bytes.resize(static_cast<std::size_t>(std::min(size, sources.max_bytes)) + 1);  // one more: a file that grew is refused too
    file.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (file.bad()) throw unreadable();
    bytes.resize(static_cast<std::size_t>(file.gcount()));
  } catch (const std::ios_base::failure&) {  // libstdc++ throws where the read itself fails
    throw unreadable();
  }
  if (bytes.size() > sources.max_bytes) throw too_large();
  return bytes;
}

}  // namespace detail

}  // namespace llmgate::inline v0
