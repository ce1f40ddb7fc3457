// The second translation unit of the ODR check; see first.cpp.
#include <vector>  // std::vector

#include <llmgate/llmgate.hpp>

float second_similarity() {
  llmgate::flat_index<> index(3);
  if (index.add(7, std::vector<float>{0, 0, 1})) return 0;
  const auto hits = index.search(std::vector<float>{0, 0, 1}, 1);
  const float a[] = {0, 0, 1};
  return hits.empty() ? 0 : hits[0].similarity * llmgate::simd::cosine(a, a, 3);
}
