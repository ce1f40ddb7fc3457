// verifier_model: logits computed exactly as the layout says, for both
// kinds; malformed models refused; save_to / load_from give the same model.
#include <boost/test/unit_test.hpp>

#include <cmath>      // std::nanf
#include <limits>     // std::numeric_limits
#include <stdexcept>  // std::invalid_argument
#include <vector>     // std::vector

#include "llmgate/cache/verifier_model.hpp"
#include "llmgate/store/snapshot_file.hpp"
#include "../temporary_directory.hpp"

using llmgate::tree_split;
using llmgate::verifier_model;
namespace store = llmgate::store;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr store::kind_tag test_kind = {'T', 'E', 'S', 'T'};

// Depth 2, one tree: the root tests feature 0 > 0.5; its left child
// feature 1 > 1; its right child is not split (all go left).
verifier_model small_trees() {
  return verifier_model::trees(2, 2, 0.5f, {{0, 0.5f}, {1, 1.0f}, {1, inf}}, {1.0f, 2.0f, 3.0f, 4.0f});
}

verifier_model round_trip(const verifier_model& model, const llmgate::test::temporary_directory& dir) {
  store::snapshot_writer out(test_kind, 1);
  model.save_to(out);
  BOOST_TEST_REQUIRE(!out.commit(dir / "model.bin"));
  std::error_code ec;
  store::snapshot_reader in(dir / "model.bin", test_kind, 1, ec);
  BOOST_TEST_REQUIRE(!ec);
  auto loaded = verifier_model::load_from(in);
  BOOST_TEST(!in.finish());
  return loaded;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(verifier_model_test)

BOOST_AUTO_TEST_CASE(a_default_model_says_one_half) {
  const verifier_model model;
  BOOST_TEST(model.logit({}) == 0.0f);
  BOOST_TEST(model.probability({}) == 0.5f);
  BOOST_TEST(model.feature_count() == 0u);
}

BOOST_AUTO_TEST_CASE(logistic_logit_is_the_bias_plus_the_weighted_sum) {
  const auto model = verifier_model::logistic({1.0f, -2.0f, 0.5f}, 0.25f);
  BOOST_TEST((model.model_kind() == verifier_model::kind::logistic));
  BOOST_TEST(model.feature_count() == 3u);
  const std::vector<float> x = {2.0f, 1.0f, 4.0f};
  BOOST_TEST(model.logit(x) == 2.25f);
  // Missing features read as 0; extra ones are ignored.
  BOOST_TEST(model.logit(std::vector<float>{2.0f}) == 2.25f);
  BOOST_TEST(model.logit(std::vector<float>{2.0f, 1.0f, 4.0f, 100.0f}) == 2.25f);
}

BOOST_AUTO_TEST_CASE(trees_logit_is_the_base_plus_the_leaves_reached) {
  const auto model = small_trees();
  BOOST_TEST((model.model_kind() == verifier_model::kind::trees));
  BOOST_TEST(model.tree_count() == 1u);
  BOOST_TEST(model.logit(std::vector<float>{0.0f, 0.0f}) == 1.5f);  // left, left
  BOOST_TEST(model.logit(std::vector<float>{0.0f, 2.0f}) == 2.5f);  // left, right
  BOOST_TEST(model.logit(std::vector<float>{0.5f, 1.0f}) == 1.5f);  // equal to a threshold goes left
  BOOST_TEST(model.logit(std::vector<float>{1.0f, 0.0f}) == 3.5f);  // right, then the unsplit node: left
  BOOST_TEST(model.logit(std::vector<float>{1.0f, 9.0f}) == 3.5f);
  BOOST_TEST(model.logit(std::vector<float>{std::nanf(""), 2.0f}) == 2.5f);  // NaN goes left

  // Two trees add up.
  const auto two = verifier_model::trees(2, 1, -1.0f, {{0, 0.0f}, {1, 0.0f}}, {1.0f, 2.0f, 10.0f, 20.0f});
  BOOST_TEST(two.tree_count() == 2u);
  BOOST_TEST(two.logit(std::vector<float>{1.0f, -1.0f}) == 11.0f);
  BOOST_TEST(two.logit(std::vector<float>{-1.0f, 1.0f}) == 20.0f);
}

BOOST_AUTO_TEST_CASE(many_trees_add_up_as_one_walk_each) {
  // 19 trees (two blocks of eight walked in step, three alone) of every
  // depth up to 9, against a plain walk of each tree.
  for (std::size_t depth = 1; depth <= 9; ++depth) {
    const std::size_t internal = (std::size_t{1} << depth) - 1, trees = 19;
    std::vector<tree_split> splits(trees * internal);
    std::vector<float> leaves(trees << depth);
    for (std::size_t i = 0; i < splits.size(); ++i)
      splits[i] = {static_cast<std::uint32_t>(i % 3), static_cast<float>(i % 7) - 3.0f};
    for (std::size_t i = 0; i < leaves.size(); ++i) leaves[i] = static_cast<float>(i % 5);  // exact sums
    const auto model = verifier_model::trees(3, depth, 0.5f, splits, leaves);
    for (const std::vector<float>& x : {std::vector<float>{0.0f, 0.0f, 0.0f}, {-2.5f, 1.5f, 3.5f}, {9.0f, -9.0f, 0.5f}}) {
      float expected = 0.5f;
      for (std::size_t t = 0; t < trees; ++t) {
        std::size_t node = 0;
        while (node < internal) {
          const auto& s = splits[t * internal + node];
          node = 2 * node + (x[s.feature] > s.threshold ? 2 : 1);
        }
        expected += leaves[(t << depth) + node - internal];
      }
      BOOST_TEST(model.logit(x) == expected, "depth " << depth);
    }
  }
}

BOOST_AUTO_TEST_CASE(malformed_models_are_refused) {
  BOOST_CHECK_THROW(verifier_model::logistic({1.0f, std::nanf("")}, 0.0f), std::invalid_argument);
  BOOST_CHECK_THROW(verifier_model::logistic({1.0f}, inf), std::invalid_argument);
  // A feature out of range, too few splits, too few leaves, depth 0.
  BOOST_CHECK_THROW(verifier_model::trees(1, 1, 0.0f, {{1, 0.0f}}, {1.0f, 2.0f}), std::invalid_argument);
  BOOST_CHECK_THROW(verifier_model::trees(2, 2, 0.0f, {{0, 0.0f}}, {1.0f, 2.0f, 3.0f, 4.0f}), std::invalid_argument);
  BOOST_CHECK_THROW(verifier_model::trees(2, 1, 0.0f, {{0, 0.0f}}, {1.0f, 2.0f, 3.0f}), std::invalid_argument);
  BOOST_CHECK_THROW(verifier_model::trees(2, 0, 0.0f, {}, {1.0f}), std::invalid_argument);
  BOOST_CHECK_THROW(verifier_model::trees(1, 1, 0.0f, {{0, std::nanf("")}}, {1.0f, 2.0f}), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(both_kinds_load_back_identical) {
  llmgate::test::temporary_directory dir;
  const auto logistic = verifier_model::logistic({1.0f, -2.0f, 0.5f}, 0.25f);
  BOOST_TEST((round_trip(logistic, dir) == logistic));
  const auto trees = small_trees();
  const auto loaded = round_trip(trees, dir);
  BOOST_TEST((loaded == trees));
  BOOST_TEST(loaded.logit(std::vector<float>{1.0f, 0.0f}) == 3.5f);
}

BOOST_AUTO_TEST_CASE(inconsistent_content_marks_the_reader_corrupt) {
  llmgate::test::temporary_directory dir;
  const auto check = [&](auto write) {
    store::snapshot_writer out(test_kind, 1);
    write(out);
    BOOST_TEST_REQUIRE(!out.commit(dir / "bad.bin"));
    std::error_code ec;
    store::snapshot_reader in(dir / "bad.bin", test_kind, 1, ec);
    BOOST_TEST_REQUIRE(!ec);
    const auto model = verifier_model::load_from(in);
    BOOST_TEST((in.finish() == llmgate::errc::corrupt_file));
    BOOST_TEST(model.feature_count() == 0u);
  };
  check([](store::snapshot_writer& out) {  // an unknown kind
    out.write(std::uint8_t{7});
    out.write(std::uint32_t{0});
    out.write(0.0f);
    out.write(std::uint64_t{0});
  });
  check([](store::snapshot_writer& out) {  // a split naming feature 5 of 2
    out.write(std::uint8_t{1});
    out.write(std::uint32_t{2});
    out.write(0.0f);
    out.write(std::uint32_t{1});
    out.write(std::uint64_t{1});
    out.write(std::uint32_t{5});
    out.write(0.0f);
    out.write(std::uint64_t{2});
    out.write(1.0f);
    out.write(2.0f);
  });
  check([](store::snapshot_writer& out) {  // more weights announced than the file holds
    out.write(std::uint8_t{0});
    out.write(std::uint32_t{2});
    out.write(0.0f);
    out.write(std::uint64_t{1} << 40);
  });
  check([](store::snapshot_writer& out) {  // a depth past the largest
    out.write(std::uint8_t{1});
    out.write(std::uint32_t{2});
    out.write(0.0f);
    out.write(std::uint32_t{40});
    out.write(std::uint64_t{1});
  });
}

BOOST_AUTO_TEST_SUITE_END()
