// verifier_weights: a weights file reads back as written (the same logits),
// and a file that is missing, truncated, altered, of a newer format, of
// another feature set or feature count, or inconsistent inside is refused
// with llmgate::error naming the file and the cause.
#include <boost/test/unit_test.hpp>

#include <cstdint>  // std::uint8_t, std::uint32_t, std::uint64_t
#include <string>   // std::string
#include <vector>   // std::vector

#include "llmgate/cache/pair_features.hpp"
#include "llmgate/cache/verifier_weights.hpp"
#include "../file_bytes.hpp"
#include "../temporary_directory.hpp"

using llmgate::errc;
using llmgate::pair_featurizer;
using llmgate::verifier_model;
using llmgate::verifier_weights;
using llmgate::word_idf;
using llmgate::test::read_bytes;
using llmgate::test::write_bytes;
namespace store = llmgate::store;

namespace {

constexpr store::kind_tag weights_kind = {'V', 'R', 'F', 'W'};
constexpr std::size_t features = pair_featurizer::feature_count;

verifier_weights sample_weights() {
  const std::vector<std::string> texts = {"How do I learn C++?", "What is the capital of France?",
                                          "How do I learn Rust quickly?"};
  std::vector<float> w(features);
  for (std::size_t i = 0; i < features; ++i) w[i] = 0.5f - 0.25f * static_cast<float>(i);
  std::vector<llmgate::tree_split> splits = {{0, 0.5f}, {static_cast<std::uint32_t>(features - 1), -1.0f},
                                             {0, std::numeric_limits<float>::infinity()}};
  return {word_idf::fit(texts),
          verifier_model::trees(features, 2, -0.5f, std::move(splits), {0.1f, 0.2f, 0.3f, 0.4f}),
          "three questions, for the test"};
}

// A weights file whose header says `feature_set` and `count`, with a valid
// model of `model_features` after it.
void write_with_header(const std::filesystem::path& path, std::uint32_t feature_set, std::uint32_t count,
                       std::size_t model_features, std::uint32_t kind_version = 1) {
  store::snapshot_writer out(weights_kind, kind_version);
  out.write(feature_set);
  out.write(count);
  word_idf().save_to(out);
  verifier_model::logistic(std::vector<float>(model_features, 1.0f), 0.0f).save_to(out);
  out.write_string("made by hand");
  BOOST_TEST_REQUIRE(!out.commit(path));
}

// Every byte of a small file; about 2,000 evenly spread ones of a larger.
std::size_t stride(std::size_t size) { return size / 2000 + 1; }

// Runs `load` and checks that it throws llmgate::error with `code`, naming
// the file and, when given, `cause`.
void check_refused(const std::filesystem::path& path, errc code, const std::string& cause = {}) {
  try {
    (void)llmgate::load_verifier_weights(path);
    BOOST_ERROR("loaded " << path);
  } catch (const llmgate::error& e) {
    BOOST_TEST((e.code() == code), path << ": " << e.what());
    BOOST_TEST(std::string(e.what()).find(path.string()) != std::string::npos, e.what());
    BOOST_TEST(std::string(e.what()).find(cause) != std::string::npos, e.what());
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verifier_weights_test)

BOOST_AUTO_TEST_CASE(weights_load_back_with_identical_logits) {
  llmgate::test::temporary_directory dir;
  const auto weights = sample_weights();
  BOOST_TEST_REQUIRE(!llmgate::save_verifier_weights(dir / "w.vrf", weights));
  const auto loaded = llmgate::load_verifier_weights(dir / "w.vrf");
  BOOST_TEST((loaded.model == weights.model));
  BOOST_TEST(loaded.fitted_on == weights.fitted_on);
  for (std::string_view word : {"how", "learn", "france", "never-seen"}) {
    const auto hash = llmgate::detail::pair_word_hash(word);
    BOOST_TEST(loaded.idf.of(hash) == weights.idf.of(hash));
  }
  // The same features give the same logits through the loaded IDF and model.
  const pair_featurizer before(weights.idf), after(loaded.idf);
  std::vector<float> x(features), y(features);
  before.features(before.prepare("How do I learn C++?"), before.prepare("How can I learn C++ fast?"), 0.8f,
                  std::span<float, features>(x.data(), features));
  after.features(after.prepare("How do I learn C++?"), after.prepare("How can I learn C++ fast?"), 0.8f,
                 std::span<float, features>(y.data(), features));
  BOOST_TEST(x == y, boost::test_tools::per_element());
  BOOST_TEST(loaded.model.logit(y) == weights.model.logit(x));
}

BOOST_AUTO_TEST_CASE(a_missing_file_is_refused_naming_it_and_why) {
  llmgate::test::temporary_directory dir;
  check_refused(dir / "absent.vrf", errc::io_failure, "(No such file or directory)");
  check_refused(dir.path(), errc::io_failure, "(a directory, not a file)");
}

BOOST_AUTO_TEST_CASE(a_file_cut_anywhere_is_refused) {
  llmgate::test::temporary_directory dir;
  BOOST_TEST_REQUIRE(!llmgate::save_verifier_weights(dir / "w.vrf", sample_weights()));
  const auto bytes = read_bytes(dir / "w.vrf");
  for (std::size_t length = 0; length < bytes.size(); length += stride(bytes.size())) {
    write_bytes(dir / "cut.vrf", bytes.substr(0, length));
    BOOST_CHECK_THROW((void)llmgate::load_verifier_weights(dir / "cut.vrf"), llmgate::error);
  }
  write_bytes(dir / "cut.vrf", bytes.substr(0, bytes.size() - 1));
  check_refused(dir / "cut.vrf", errc::truncated_file);
}

BOOST_AUTO_TEST_CASE(a_file_altered_anywhere_is_refused) {
  llmgate::test::temporary_directory dir;
  BOOST_TEST_REQUIRE(!llmgate::save_verifier_weights(dir / "w.vrf", sample_weights()));
  const auto bytes = read_bytes(dir / "w.vrf");
  for (std::size_t at = 0; at < bytes.size(); at += stride(bytes.size())) {
    auto altered = bytes;
    altered[at] = static_cast<char>(altered[at] ^ 0x20);
    write_bytes(dir / "altered.vrf", altered);
    BOOST_CHECK_THROW((void)llmgate::load_verifier_weights(dir / "altered.vrf"), llmgate::error);
  }
  auto altered = bytes;
  altered[altered.size() - 10] = static_cast<char>(altered[altered.size() - 10] ^ 1);
  write_bytes(dir / "altered.vrf", altered);
  check_refused(dir / "altered.vrf", errc::checksum_mismatch);
}

BOOST_AUTO_TEST_CASE(another_format_version_or_kind_is_refused) {
  llmgate::test::temporary_directory dir;
  write_with_header(dir / "newer.vrf", pair_featurizer::feature_set_version, features, features, 2);
  check_refused(dir / "newer.vrf", errc::unsupported_version);
  store::snapshot_writer other({'H', 'N', 'S', 'W'}, 1);
  BOOST_TEST_REQUIRE(!other.commit(dir / "other.bin"));
  check_refused(dir / "other.bin", errc::wrong_kind_of_file);
}

BOOST_AUTO_TEST_CASE(another_feature_set_or_feature_count_is_refused) {
  llmgate::test::temporary_directory dir;
  write_with_header(dir / "ok.vrf", pair_featurizer::feature_set_version, features, features);
  BOOST_TEST(llmgate::load_verifier_weights(dir / "ok.vrf").fitted_on == "made by hand");

  write_with_header(dir / "set.vrf", pair_featurizer::feature_set_version + 1, features, features);
  check_refused(dir / "set.vrf", errc::unsupported_version,
                "fitted on pair feature set version " + std::to_string(pair_featurizer::feature_set_version + 1));
  write_with_header(dir / "count.vrf", pair_featurizer::feature_set_version, features + 1, features + 1);
  check_refused(dir / "count.vrf", errc::wrong_kind_of_file,
                "fitted on " + std::to_string(features + 1) + " pair features");
  // The header agrees but the model reads another number of features.
  write_with_header(dir / "model.vrf", pair_featurizer::feature_set_version, features, features + 1);
  check_refused(dir / "model.vrf", errc::corrupt_file);
}

BOOST_AUTO_TEST_SUITE_END()
