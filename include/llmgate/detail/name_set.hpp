// string_hash and name_set: hashing that looks strings up by view, and the
// names already met in one list of a file, so that refusing a repeat or
// finding a name costs the same however long the list is (a walk over the
// names before each one made a config of many names quadratic: see
// fuzz.linearity's config and eval_inputs shapes).
#pragma once

#include <cstddef>      // std::size_t
#include <functional>   // std::equal_to
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/container_hash/hash.hpp>         // boost::hash
#include <boost/unordered/unordered_flat_set.hpp>  // boost::unordered_flat_set

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0::detail {

/// A hash for containers of std::string keyed by std::string_view too.
struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return boost::hash<std::string_view>{}(s); }
};

/// insert(name).second is false for a name already there.
using name_set = boost::unordered_flat_set<std::string, string_hash, std::equal_to<>>;

}  // namespace llmgate::inline v0::detail
