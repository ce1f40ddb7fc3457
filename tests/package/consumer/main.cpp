// A small program using llmgate the way a user would. It checks its answers
// and exits nonzero when one is wrong, so a package that builds but
// misbehaves still fails.
#include <cstdio>  // std::printf, std::fprintf
#include <vector>  // std::vector

#include <llmgate/llmgate.hpp>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "consumer: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  llmgate::flat_index<> index(3);
  expect(!index.add(1, std::vector<float>{1, 0, 0}), "add(1) failed");
  expect(!index.add(2, std::vector<float>{0, 1, 0}), "add(2) failed");

  const auto hits = index.search(std::vector<float>{1, 0.1f, 0}, 1);
  expect(hits.size() == 1, "search did not return one hit");
  if (!hits.empty()) {
    expect(hits[0].id == 1, "nearest neighbour is not id 1");
    expect(hits[0].similarity > 0.99f, "similarity to id 1 is not about 0.995");
  }

  const std::vector<float> a{1, 2, 3};
  const std::vector<float> b{2, 4, 6};
  const float cosine = llmgate::simd::cosine(a.data(), b.data(), a.size());
  expect(cosine > 0.999f && cosine < 1.001f, "cosine of parallel vectors is not 1");

  std::printf("llmgate %d.%d.%d: %s\n", LLMGATE_VERSION_MAJOR, LLMGATE_VERSION_MINOR,
              LLMGATE_VERSION_PATCH, failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
