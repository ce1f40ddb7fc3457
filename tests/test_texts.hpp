// Seeded text data for the cache tests: texts of random words, far apart
// from one another, so that approximate search has no near tie to confuse.
#pragma once

#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace llmgate::test {

/// `count` texts of 8 words drawn from a vocabulary of 500, the same for
/// the same seed.
inline std::vector<std::string> random_word_texts(std::size_t count, unsigned seed) {
  std::mt19937 draw(seed);
  std::vector<std::string> texts;
  for (std::size_t i = 0; i < count; ++i) {
    std::string text;
    for (int w = 0; w < 8; ++w) text += "word" + std::to_string(draw() % 500) + " ";
    texts.push_back(text);
  }
  return texts;
}

}  // namespace llmgate::test
