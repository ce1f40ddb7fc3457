// verifier_weights: everything a learned verifier needs from its training,
// in one file: the word IDF the pair features were computed with, the
// fitted model, and a line saying what it was fitted on.
//
// The file is a store::snapshot_file of kind "VRFW" (versioned, CRC-32
// checked, written atomically), read without JSON. Its payload:
//   feature_set_version u32 | feature_count u32 | word_idf | verifier_model |
//   fitted_on (u64 size + bytes)
// A model fitted on other features would score pairs with the wrong
// meaning of each number, silently: a file of another feature_set_version
// or feature_count than this build's pair_featurizer is refused.
#pragma once

#include <cstdint>       // std::uint32_t
#include <filesystem>    // std::filesystem::path
#include <string>        // std::string, std::to_string
#include <system_error>  // std::error_code

#include "llmgate/cache/pair_features.hpp"   // pair_featurizer, word_idf
#include "llmgate/cache/verifier_model.hpp"  // verifier_model
#include "llmgate/error.hpp"                 // llmgate::error, errc
#include "llmgate/store/snapshot_file.hpp"   // snapshot_writer, snapshot_reader

namespace llmgate::inline v0 {

/// What a weights file holds: the IDF the features were fitted with, the
/// model, and a line saying what it was fitted on.
struct verifier_weights {
  word_idf idf;
  verifier_model model;
  std::string fitted_on;
};

namespace detail {

inline constexpr store::kind_tag verifier_weights_kind = {'V', 'R', 'F', 'W'};
inline constexpr std::uint32_t verifier_weights_version = 1;

}  // namespace detail

/// Writes `weights` to `path` (a new file renamed into place); an error
/// code when the file cannot be written.
[[nodiscard]] inline std::error_code save_verifier_weights(const std::filesystem::path& path,
                                                           const verifier_weights& weights) {
  store::snapshot_writer out(detail::verifier_weights_kind, detail::verifier_weights_version);
  out.write(pair_featurizer::feature_set_version);
  out.write(static_cast<std::uint32_t>(pair_featurizer::feature_count));
  weights.idf.save_to(out);
  weights.model.save_to(out);
  out.write_string(weights.fitted_on);
  return out.commit(path);
}

/// Reads a file save_verifier_weights wrote. Throws llmgate::error naming
/// the file and the cause when it is missing or unreadable (io_failure),
/// not an llmgate file, another kind of file, of a newer format
/// (unsupported_version), truncated, altered (checksum_mismatch), of
/// another feature set (unsupported_version: fitted with other features) or
/// feature count (wrong_kind_of_file), or inconsistent inside
/// (corrupt_file).
inline verifier_weights load_verifier_weights(const std::filesystem::path& path) {
  const std::string context = "loading verifier weights from '" + path.string() + "'";
  std::error_code ec;
  store::snapshot_reader in(path, detail::verifier_weights_kind, detail::verifier_weights_version, ec);
  if (ec) throw store::load_failure(context, path, ec);

  const auto feature_set = in.read<std::uint32_t>();
  const auto feature_count = in.read<std::uint32_t>();
  if (feature_set != pair_featurizer::feature_set_version)
    throw error(errc::unsupported_version,
                context + ": fitted on pair feature set version " + std::to_string(feature_set) +
                    ", this build computes version " + std::to_string(pair_featurizer::feature_set_version));
  if (feature_count != pair_featurizer::feature_count)
    throw error(errc::wrong_kind_of_file,
                context + ": fitted on " + std::to_string(feature_count) + " pair features, this build computes " +
                    std::to_string(pair_featurizer::feature_count));

  verifier_weights weights;
  weights.idf = word_idf::load_from(in);
  weights.model = verifier_model::load_from(in);
  weights.fitted_on = in.read_string();
  if (weights.model.feature_count() != pair_featurizer::feature_count) in.mark_corrupt();
  if (const auto bad = in.finish()) throw error(bad, context);
  return weights;
}

}  // namespace llmgate::inline v0
