// A program using only llmgate's core (vector index, SIMD kernels, embedder,
// exact and semantic caches) the way a user would, linked to llmgate::core.
// It checks its answers and exits nonzero when one is wrong.
#include <cstdio>  // std::printf, std::fprintf
#include <string>  // std::string
#include <vector>  // std::vector

#include <llmgate/cache.hpp>
#include <llmgate/embed.hpp>
#include <llmgate/index.hpp>
#include <llmgate/simd.hpp>
#include <llmgate/version.hpp>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "consumer_core: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  llmgate::flat_index<> index(3);
  expect(!index.add(1, std::vector<float>{1, 0, 0}), "add(1) failed");
  expect(!index.add(2, std::vector<float>{0, 1, 0}), "add(2) failed");
  const auto hits = index.search(std::vector<float>{1, 0.1f, 0}, 1);
  expect(hits.size() == 1 && hits[0].id == 1, "nearest neighbour is not id 1");

  const std::vector<float> a{1, 2, 3};
  const std::vector<float> b{2, 4, 6};
  const float cosine = llmgate::simd::cosine(a.data(), b.data(), a.size());
  expect(cosine > 0.999f && cosine < 1.001f, "cosine of parallel vectors is not 1");

  const llmgate::cache_scope scope;
  llmgate::exact_cache<std::string> exact;
  exact.insert(scope, "What is the capital of France?", "Paris");
  expect(exact.find(scope, "What is the capital of France?").value_or("") == "Paris",
         "exact cache did not return its answer");

  llmgate::basic_semantic_cache<std::string> semantic;
  semantic.insert(scope, "How do I reset my password?", "Use the 'forgot password' link.");
  const auto same = semantic.lookup(scope, "How do I reset my password?");
  expect(same.outcome == llmgate::lookup_outcome::hit && same.answer &&
             *same.answer == "Use the 'forgot password' link.",
         "semantic cache missed the question it stored");
  const auto other = semantic.lookup(scope, "What is the capital of France?");
  expect(other.outcome != llmgate::lookup_outcome::hit, "semantic cache hit an unrelated question");

  std::printf("llmgate core %d.%d.%d: %s\n", LLMGATE_VERSION_MAJOR, LLMGATE_VERSION_MINOR,
              LLMGATE_VERSION_PATCH, failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
