// A small program using llmgate's evaluation kit the way a user would,
// without a model server: a score kept in a run store (SQLite in memory,
// so a package that forgets to link SQLite fails here) and read back, and
// the BLEU of an answer against its reference. It checks its answers and
// exits nonzero when one is wrong.
#include <cmath>   // std::abs
#include <cstdio>  // std::printf, std::fprintf

#include <llmgate/eval/run/run_store.hpp>  // run_store, score_record
#include <llmgate/eval/score/bleu.hpp>     // sentence_bleu
#include <llmgate/version.hpp>             // LLMGATE_VERSION_*

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "consumer_eval: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  auto store = llmgate::run_store::in_memory();
  store.put_score({.request_key = "q1/small", .method = "bleu", .value = 0.5});
  const auto scores = store.scores();
  expect(scores.size() == 1 && scores[0].request_key == "q1/small" && scores[0].value == 0.5,
         "the run store did not give back the score it was given");
  expect(store.has_score("q1/small", "bleu"), "the run store does not know the score it holds");

  // An answer equal to its reference scores 1.
  const double same = llmgate::sentence_bleu("the cache answers repeated questions", "the cache answers repeated questions");
  expect(std::abs(same - 1.0) < 1e-12, "an answer equal to its reference does not score a BLEU of 1");

  std::printf("consumer_eval: llmgate %d.%d.%d, %d failures\n", LLMGATE_VERSION_MAJOR, LLMGATE_VERSION_MINOR,
              LLMGATE_VERSION_PATCH, failures);
  return failures == 0 ? 0 : 1;
}
