// The README's index, as a user's whole program (scripts/bench compile).
#include <vector>

#include <llmgate/index.hpp>

int main() {
  std::vector<float> embedding(384, 0.5f), query(384, 0.5f);
  llmgate::hnsw_index<llmgate::cosine_metric> index(384);
  auto ec = index.add(42, embedding);
  auto hits = index.search(query, 10);
  return ec || hits.empty() ? 1 : 0;
}
