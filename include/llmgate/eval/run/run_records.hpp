// run_records: what an evaluation run records, one struct per kind of row
// in the run store (run_store.hpp): the requests sent and what came back,
// the scores given to answers, the ratings people gave, and what the kit
// knows of the models it served itself.
#pragma once

#include <cstdint>      // std::int64_t, std::uint64_t
#include <optional>     // std::optional
#include <string>       // std::string
#include <string_view>  // std::string_view

namespace llmgate::inline v0 {

/// Why a request is sent: warm-up (not scored), the evaluation proper, the
/// latency schedule, or a judge's question about an answer.
enum class request_kind { warmup, evaluation, schedule, judge };

inline std::string_view to_string(request_kind kind) noexcept {
  switch (kind) {
    case request_kind::warmup: return "warmup";
    case request_kind::evaluation: return "evaluation";
    case request_kind::schedule: return "schedule";
    case request_kind::judge: return "judge";
  }
  return "evaluation";
}

/// How a request ended when it did not answer. rate_limited: 429;
/// server_error: 5xx; client_error: other 4xx; timeout: no answer in time;
/// unreachable: no connection (an outage, with its time in started_unix_ms).
enum class request_failure { none, rate_limited, server_error, client_error, timeout, unreachable };

inline std::string_view to_string(request_failure error) noexcept {
  switch (error) {
    case request_failure::none: return "none";
    case request_failure::rate_limited: return "rate_limited";
    case request_failure::server_error: return "server_error";
    case request_failure::client_error: return "client_error";
    case request_failure::timeout: return "timeout";
    case request_failure::unreachable: return "unreachable";
  }
  return "none";
}

/// A request the run will send, before it is sent. `key` names it for good
/// ("evaluation/<candidate>/<prompt>/<repetition>", "judge/<method>/<answer key>"...):
/// a resumed run finds it by its key and never sends a recorded one again.
struct planned_request {
  std::string key = {};
  request_kind kind = request_kind::evaluation;
  std::string candidate = {};        ///< the candidate (or judge) asked
  std::int64_t prompt = -1;     ///< index in the prompt set; -1: none
  std::int64_t repetition = 0;  ///< 0-based
};

/// A request sent and what came back.
struct request_result {
  planned_request request = {};
  std::int64_t started_unix_ms = 0;  ///< when it was sent (wall clock)
  double latency_ms = 0;             ///< send to last byte
  double ttft_ms = 0;                ///< send to first content token; 0 when none came
  std::uint64_t tokens_in = 0;
  std::uint64_t tokens_out = 0;
  std::string response = {};              ///< the answer's text
  request_failure error = request_failure::none;
  int http_status = 0;               ///< the upstream's status where it gave one
  std::string error_message = {};
  int attempts = 1;                  ///< > 1: it was in flight when a run was killed, and was sent again
  double overhead_us = 0;            ///< the kit's own time around the call (store writes, scheduling)

  bool ok() const noexcept { return error == request_failure::none; }
  /// Milliseconds per output token after the first; 0 when it cannot be told.
  double per_token_ms() const noexcept {
    return tokens_out > 1 && latency_ms > ttft_ms && ttft_ms > 0 ? (latency_ms - ttft_ms) / static_cast<double>(tokens_out - 1)
                                                                 : 0;
  }
};

/// A score of one answer by one method ("tfidf", "bleu", "embedding:<embedder>",
/// "sem_bleu:<embedder>", "judge:scorer", ...), in [0, 1]. A judge whose
/// output could not be parsed (after its one retry) leaves `value` empty:
/// recorded as unparsed, never scored.
struct score_record {
  std::string request_key = {};  ///< the answer scored (an evaluation request's key)
  std::string method = {};
  std::optional<double> value = {};
  std::string detail = {};  ///< a judge's reasoning, or its raw output when unparsed
};

/// A person's 0-10 rating of one answer, given on the rating page or imported from CSV.
struct rating_record {
  std::string rater = {};
  std::string request_key = {};
  int score = 0;  ///< 0..10
  std::int64_t at_unix_ms = 0;
};

/// What the kit knows of a model it served itself from a GGUF file.
struct served_model_info {
  std::string candidate = {};
  std::string path = {};              ///< the GGUF file
  std::uint64_t file_bytes = 0;
  std::string quantization = {};      ///< GGUF general.file_type by name (F32, F16, Q8_0, Q4_K_M...)
  std::uint64_t parameters = 0;  ///< weights in the file; 0 when unknown
  std::uint64_t rss_bytes = 0;   ///< the engine's resident memory at the end of the run
  std::string engine = {};            ///< what served it ("node-llama-cpp 3.22.1", "llama-server")
};

}  // namespace llmgate::inline v0
