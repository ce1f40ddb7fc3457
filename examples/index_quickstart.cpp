// The smallest use of llmgate's vector core: put vectors in an HNSW index
// under your own ids, search it, save it, load it back.
#include <cstdio>
#include <random>
#include <vector>

#include <llmgate/index.hpp>

int main() {
  constexpr std::size_t dimension = 64, count = 20000;
  std::mt19937 generator(7);
  std::normal_distribution<float> normal;
  const auto random_vector = [&] {
    std::vector<float> v(dimension);
    for (float& x : v) x = normal(generator);
    return v;
  };

  llmgate::hnsw_index<llmgate::cosine_metric> index(dimension, {.m = 16, .ef_construction = 200});
  std::vector<std::vector<float>> vectors;
  for (llmgate::vector_id id = 0; id < count; ++id) {
    vectors.push_back(random_vector());
    if (const auto ec = index.add(id, vectors.back())) {
      std::fprintf(stderr, "add failed: %s\n", ec.message().c_str());
      return 1;
    }
    if ((id + 1) % 5000 == 0) std::fprintf(stderr, "  indexed %zu / %zu\n", std::size_t(id + 1), count);
  }

  // A slightly perturbed copy of vector 42 finds vector 42 first.
  std::vector<float> query = vectors[42];
  for (float& x : query) x += 0.05f * normal(generator);
  std::printf("instruction set: %s\n", llmgate::simd::arch_name());
  std::printf("%zu vectors, %.1f MB\n", index.size(), index.memory_usage() / 1e6);
  for (const auto& hit : index.search(query, 3))
    std::printf("  id %llu  cosine %.4f\n", static_cast<unsigned long long>(hit.id), hit.similarity);

  // Only even ids, as a cache restricts a search to one tenant's entries.
  const auto even = [](llmgate::vector_id id) { return id % 2 == 0; };
  std::printf("closest even id: %llu\n",
              static_cast<unsigned long long>(index.search(query, 1, even).at(0).id));

  if (const auto ec = index.save("quickstart.hnsw")) {
    std::fprintf(stderr, "save failed: %s\n", ec.message().c_str());
    return 1;
  }
  const auto loaded = llmgate::hnsw_index<llmgate::cosine_metric>::load("quickstart.hnsw");
  std::printf("reloaded %zu vectors; closest id again %llu\n", loaded.size(),
              static_cast<unsigned long long>(loaded.search(query, 1).at(0).id));
  return 0;
}
