// One of two translation units that include all of llmgate and are linked
// into one program: a function or variable defined in a header without
// `inline` shows up here as a duplicate symbol at link time.
#include <vector>  // std::vector

#include <llmgate/llmgate.hpp>

float second_similarity();

// Both translation units instantiate and call the same templates and inline
// functions, so each object file carries its own copy for the linker to merge.
static float first_similarity() {
  llmgate::flat_index<> index(3);
  if (index.add(1, std::vector<float>{1, 0, 0})) return 0;
  const auto hits = index.search(std::vector<float>{1, 0, 0}, 1);
  const float a[] = {1, 0, 0};
  return hits.empty() ? 0 : hits[0].similarity * llmgate::simd::cosine(a, a, 3);
}

int main() { return first_similarity() > 0.999f && second_similarity() > 0.999f ? 0 : 1; }
