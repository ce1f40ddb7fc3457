// read_labelled_pairs: question pairs labelled duplicate or not, from a
// JSON-lines file (QQP's format), for the tools that fit and measure a
// verifier (examples/train_verifier, the replay, the benchmarks). Apart
// from cache/verifier_training.hpp, which fits from memory in the core,
// because reading JSON needs Boost.JSON.
#pragma once

#include <cstddef>      // std::size_t
#include <filesystem>   // std::filesystem::path
#include <fstream>      // std::ifstream
#include <string>       // std::string, std::getline, std::to_string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include <boost/json/parse.hpp>  // boost::json::parse
#include <boost/json/value.hpp>  // boost::json::value, object

#include "llmgate/cache/verifier_training.hpp"  // labelled_pair
#include "llmgate/error.hpp"                    // llmgate::error, errc
#include "llmgate/version.hpp"                  // the inline versioned namespace

namespace llmgate::inline v0 {

/// Reads JSON lines {"a": text, "b": text, "duplicate": 0|1|true|false}
/// (QQP's format; other keys are ignored, blank lines skipped). Throws
/// llmgate::error naming the file, and the line for content: io_failure
/// when it cannot be read, corrupt_file for a line that is not such an
/// object.
inline std::vector<labelled_pair> read_labelled_pairs(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(errc::io_failure, "reading labelled pairs from '" + path.string() + "'");
  std::vector<labelled_pair> pairs;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto fail = [&](std::string_view why) {
      return error(errc::corrupt_file, "reading labelled pairs from '" + path.string() + "' line " +
                                           std::to_string(number) + ": " + std::string(why));
    };
    boost::system::error_code ec;
    const boost::json::value value = boost::json::parse(line, ec);
    if (ec) throw fail("not JSON (" + ec.message() + ")");
    const auto* object = value.if_object();
    if (!object) throw fail("not a JSON object");
    const auto text = [&](std::string_view key) {
      const auto* field = object->if_contains(key);
      if (!field || !field->is_string()) throw fail("\"" + std::string(key) + "\" is missing or not a string");
      return std::string(field->get_string());
    };
    labelled_pair pair{text("a"), text("b")};
    const auto* label = object->if_contains("duplicate");
    if (label && label->is_bool()) {
      pair.duplicate = label->get_bool();
    } else if (label && label->is_int64() && (label->get_int64() == 0 || label->get_int64() == 1)) {
      pair.duplicate = label->get_int64() == 1;
    } else if (label && label->is_uint64() && label->get_uint64() <= 1) {
      pair.duplicate = label->get_uint64() == 1;
    } else {
      throw fail("\"duplicate\" is missing or not 0, 1, true or false");
    }
    pairs.push_back(std::move(pair));
  }
  if (in.bad()) throw error(errc::io_failure, "reading labelled pairs from '" + path.string() + "'");
  return pairs;
}

}  // namespace llmgate::inline v0
