// The prompt benches' use cases (bench/prompt/: code_generation,
// personalization, trip_plan): each draws one PML prompt document of its
// schema, choosing modules and parameters uniformly with a seeded generator,
// so that every run and platform draws the same prompts. Used by
// prompt_bench (plain against compiled) and pool_bench (balancing replicas).
#pragma once

#include <cstddef>  // std::size_t
#include <cstdint>  // std::uint64_t
#include <random>   // std::mt19937_64
#include <string>   // std::string
#include <utility>  // std::swap
#include <vector>   // std::vector

namespace llmgate_bench {

struct use_case {
  std::string name;
  std::string schema_file;
  /// One prompt document drawn with `rng`.
  std::string (*draw)(std::mt19937_64& rng);
};

inline std::size_t uniform(std::mt19937_64& rng, std::size_t n) {
  // Rejection sampling: uniform, and the same on every standard library
  // (std::uniform_int_distribution's algorithm is not specified).
  const std::uint64_t limit = rng.max() - rng.max() % n;
  std::uint64_t value;
  do value = rng(); while (value >= limit);
  return static_cast<std::size_t>(value % n);
}

template <std::size_t N>
const char* pick(std::mt19937_64& rng, const char* const (&items)[N]) {
  return items[uniform(rng, N)];
}

inline std::string draw_code_generation(std::mt19937_64& rng) {
  static constexpr const char* files[] = {"lru", "lfu", "top_k", "ndjson_parser", "task_analyser", "stage"};
  static constexpr const char* tasks[] = {
      "Write a unit test for the first file above.", "Explain what could go wrong with concurrent use of this code.",
      "Add a function that returns the number of elements.", "Rewrite the second file without exceptions.",
      "Document the complexity of every public function.", "Find a bug in this code and fix it."};
  std::vector<std::size_t> order = {0, 1, 2, 3, 4, 5};
  for (std::size_t i = 0; i < 3; ++i) std::swap(order[i], order[i + uniform(rng, order.size() - i)]);  // 3 of 6
  std::string prompt = "<prompt schema=\"code_generation\">";
  for (std::size_t i = 0; i < 3; ++i) prompt += std::string("<") + files[order[i]] + "/>";
  return prompt + pick(rng, tasks) + "</prompt>";
}

inline std::string draw_personalization(std::mt19937_64& rng) {
  static constexpr const char* grade[] = {"elementary", "middle_school", "high_school", "college", "graduate"};
  static constexpr const char* style[] = {"visual", "auditory", "reading_writing", "kinesthetic", "social"};
  static constexpr const char* subject[] = {"mathematics", "history", "biology", "literature", "programming"};
  static constexpr const char* pace[] = {"slow", "steady", "fast", "self_paced", "intensive"};
  static constexpr const char* motivation[] = {"curious", "grades", "career", "reluctant", "competitive"};
  static constexpr const char* language[] = {"beginner_english", "intermediate_english", "fluent_english",
                                             "bilingual", "academic_english"};
  static constexpr const char* asks[] = {"Plan today's lesson.", "Write three exercises.", "Explain the key idea.",
                                         "Suggest a project for the week.", "Write a short quiz."};
  std::string prompt = "<prompt schema=\"personalization\">";
  for (const char* member : {pick(rng, grade), pick(rng, style), pick(rng, subject), pick(rng, pace),
                             pick(rng, motivation), pick(rng, language)})
    prompt += std::string("<") + member + "/>";
  return prompt + pick(rng, asks) + "</prompt>";
}

inline std::string draw_trip_plan(std::mt19937_64& rng) {
  static constexpr const char* places[] = {"maldives", "amazon", "kyoto", "iceland",
                                           "patagonia", "morocco", "new_zealand", "tuscany"};
  const std::size_t days = 2 + uniform(rng, 13);
  return "<prompt schema=\"trip_plan\"><travel_plan duration=\"" + std::to_string(days) + " days\"><" +
         pick(rng, places) + "/></travel_plan></prompt>";
}

inline const std::vector<use_case> use_cases = {
    {"code_generation", "code_generation.pml", draw_code_generation},
    {"personalization", "personalization.pml", draw_personalization},
    {"trip_plan", "trip_plan.pml", draw_trip_plan},
};

}  // namespace llmgate_bench
