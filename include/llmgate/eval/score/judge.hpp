// judge: the LLM judges of an evaluation. Each judge of the plan (a kind, the
// candidate whose model judges, a template and sampling) is asked about the
// answers the run recorded, and each verdict becomes a score_record in [0, 1]
// the moment it is given, so that a resumed run skips what was judged:
//
//   scorer, comparer, comparer_reasoning   every ok evaluation answer of every
//       candidate but the reference, one question each (the comparers with the
//       reference's answer to the same prompt and repetition, else its first ok
//       answer to that prompt; none: not judged)
//   choice   every group of ok evaluation answers to the same prompt and
//       repetition, one per candidate, the reference's included (two at least):
//       shown shuffled and labelled A, B, C..., with no candidate name anywhere
//       in the question; each member gets a record, 1 for the chosen, 0 else.
//
// Methods: "judge:<kind>" ("judge:scorer", "judge:comparer",
// "judge:comparer_reasoning", "judge:choice"), "judge:<kind>:<candidate>"
// when the plan has two judges of one kind.
//
// A malformed answer (judge_verdict.hpp) is asked again once, the same
// question; malformed again, it is recorded unparsed: value empty, detail
// "unparsed: " + the raw output. A judge that cannot be asked (an error
// status, no connection, no answer within plan.request_timeout_ms) is
// recorded with value empty and detail "error: <kind>: <message>", the kind as
// request_result's error kinds are named (timeout, unreachable, server_error...),
// also when it is the retry that fails; it is not asked again here.
// outcome_of() tells the two apart. Neither is ever a score. A resumed run
// skips both, unless its already_scored() answers false for records whose
// outcome_of() is judge_outcome::error, to ask those judges again.
//
// Questions are chat requests (complete, not streamed): one user message,
// the filled template; model = the judge candidate's model; parameters = the
// judge's sampling alone (not the plan's or the candidate's, which are for
// the answers). At most plan.concurrency questions are in flight.
#pragma once

#include <algorithm>    // std::min, std::max
#include <chrono>       // std::chrono::milliseconds
#include <cstddef>      // std::size_t
#include <cstdint>      // std::int64_t, std::uint64_t
#include <exception>    // std::exception_ptr, std::rethrow_exception
#include <functional>   // std::function
#include <map>          // std::map
#include <optional>     // std::optional
#include <span>         // std::span
#include <string>       // std::string, std::to_string
#include <string_view>  // std::string_view
#include <utility>      // std::move, std::pair, std::swap
#include <vector>       // std::vector

#include <boost/asio/awaitable.hpp>                    // net::awaitable
#include <boost/asio/co_spawn.hpp>                     // net::co_spawn
#include <boost/asio/deferred.hpp>                     // net::deferred
#include <boost/asio/experimental/parallel_group.hpp>  // make_parallel_group: workers; a question against its timer
#include <boost/asio/steady_timer.hpp>                 // the question's timeout
#include <boost/asio/strand.hpp>                       // net::make_strand: the workers take turns
#include <boost/asio/this_coro.hpp>                    // net::this_coro::executor
#include <boost/asio/use_awaitable.hpp>                // net::use_awaitable
#include <boost/json/serialize.hpp>                    // boost::json::serialize: sampling values as JSON text
#include <boost/system/system_error.hpp>               // boost::system::system_error: a question cancelled by the caller

#include "llmgate/backend/any_backend.hpp"         // any_backend
#include "llmgate/backend/backend_error.hpp"       // backend_error
#include "llmgate/chat/chat.hpp"                   // chat_request, set_field
#include "llmgate/error.hpp"                       // llmgate::error, errc
#include "llmgate/eval/plan/evaluation_plan.hpp"   // evaluation_plan, judge_config
#include "llmgate/eval/score/judge_templates.hpp"  // judge_template, check_judge_template, fill_placeholders
#include "llmgate/eval/score/judge_verdict.hpp"    // parse_judge_verdict, judge_*_prefix
#include "llmgate/eval/plan/prompt_rendering.hpp"  // render_prompts, prompt_text
#include "llmgate/eval/run/request_outcome.hpp"    // classify_failure, timeout_failure: as the runner records its failures
#include "llmgate/eval/run/run_records.hpp"        // request_result, score_record, request_failure

namespace llmgate::inline v0 {

namespace net = boost::asio;

struct judge_options {
  std::uint64_t seed = 22;  ///< orders each choice group's answers (choice_order)
};



/// The label of the answer shown at `position`: A..Z, then AA, AB...
inline std::string answer_label(std::size_t position) {
  std::string label;
  for (std::size_t n = position + 1; n > 0; n = (n - 1) / 26) label.insert(label.begin(), static_cast<char>('A' + (n - 1) % 26));
  return label;
}

/// The order a choice group of `size` answers (in the results' order) is
/// shown in: shown[p] = the member shown at position p. A Fisher-Yates
/// shuffle driven by SplitMix64 from (seed, prompt, repetition): the same on
/// every platform and run, different across groups.
inline std::vector<std::size_t> choice_order(std::size_t size, std::uint64_t seed, std::int64_t prompt,
                                             std::int64_t repetition) {
  std::uint64_t state = seed ^ (0x9e3779b97f4a7c15ULL * static_cast<std::uint64_t>(prompt + 1)) ^
                        (0xc2b2ae3d27d4eb4fULL * static_cast<std::uint64_t>(repetition + 1));
  const auto next = [&state] {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  std::vector<std::size_t> shown(size);
  for (std::size_t i = 0; i < size; ++i) shown[i] = i;
  for (std::size_t i = size; i > 1; --i) std::swap(shown[i - 1], shown[next() % i]);
  return shown;
}

namespace detail {

struct judge_task {
  std::size_t judge = 0;
  std::vector<const request_result*> answers = {};  ///< the one judged; or the choice group, in the results' order
  std::vector<std::size_t> shown = {};              ///< choice: the member shown at each position
  std::vector<std::string> labels = {};             ///< choice: the labels, by position
  std::string question = {};
};

struct judge_reply {
  std::string text = {};
  request_failure error = request_failure::none;
  std::string message = {};
};

// One question, cancelled when `timeout` passes first.
inline net::awaitable<judge_reply> ask_judge(any_backend backend, chat_request request, std::chrono::milliseconds timeout) {
  const auto executor = co_await net::this_coro::executor;
  net::steady_timer timer(executor, timeout);
  auto [order, failure, response, timer_code] =
      co_await net::experimental::make_parallel_group(net::co_spawn(executor, backend.complete(request), net::deferred),
                                                      timer.async_wait(net::deferred))
          .async_wait(net::experimental::wait_for_one(), net::use_awaitable);
  if (order[0] == 1 && timer_code)  // the timer was cancelled, not expired: the caller cancelled the question
    throw boost::system::system_error(timer_code);
  if (order[0] == 1) {
    auto failed = timeout_failure(timeout);
    co_return judge_reply{.error = failed.error, .message = std::move(failed.message)};
  }
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const backend_error&) {  // the judge's failure, recorded; anything else ends the judging
      auto failed = classify_failure(failure);
      co_return judge_reply{.error = failed.error, .message = std::move(failed.message)};
    }
  }
  co_return judge_reply{.text = std::move(response.content)};
}

}  // namespace detail

/// Asks the plan's judges about the ok evaluation answers in `results` that
/// already_scored(key, method) does not report, and calls record() with each
/// score_record as its verdict comes (a choice group: one per member, at
/// once). Returns the records made, in the plan's judge order, then the
/// results' order. judge_backend(candidate) gives the backend of a judge's
/// candidate; it is called once per judge, before anything is sent. The
/// functions are kept by value (a coroutine outlives temporaries); `plan`
/// and `results` must outlive the call.
/// Before anything is sent, throws llmgate::error (invalid_request) for a
/// judge whose candidate the plan lacks or whose template is refused
/// (check_judge_template), and for a prompt that cannot be rendered. Runs
/// on the awaiting coroutine's executor: record() and already_scored() are
/// called one at a time. An exception from record() stops every question
/// and propagates. Cancelled (terminal cancellation of the awaiting
/// coroutine), it drops the questions in flight unrecorded and throws.
inline net::awaitable<std::vector<score_record>> judge_answers(
    const evaluation_plan& plan, std::span<const request_result> results,
    std::function<any_backend(std::string_view candidate)> judge_backend,
    std::function<bool(std::string_view key, std::string_view method)> already_scored,
    std::function<void(const score_record&)> record, judge_options options = {}) {
  std::vector<any_backend> backends;
  std::vector<std::string> methods;
  for (std::size_t j = 0; j < plan.judges.size(); ++j) {
    const judge_config& judge = plan.judges[j];
    const std::string who = "judge " + std::to_string(j) + " (" + std::string(to_string(judge.kind)) + ")";
    if (!plan.find_candidate(judge.candidate))
      throw error(errc::invalid_request, who + ": \"" + judge.candidate + "\" is not a candidate of the plan");
    check_judge_template(judge.kind, judge_template(judge), who);
    methods.push_back(judge_method(plan, j));
  }
  for (const auto& judge : plan.judges) backends.push_back(judge_backend(judge.candidate));

  // The answers, and the reference's by prompt and repetition.
  std::vector<const request_result*> answers;
  std::map<std::pair<std::int64_t, std::int64_t>, const request_result*> reference_of;
  std::map<std::int64_t, const request_result*> first_reference_of;
  for (const auto& result : results) {
    if (result.request.kind != request_kind::evaluation || !result.ok()) continue;
    answers.push_back(&result);
    if (result.request.candidate != plan.reference) continue;
    reference_of.emplace(std::pair{result.request.prompt, result.request.repetition}, &result);
    auto& first = first_reference_of[result.request.prompt];
    if (!first || result.request.repetition < first->request.repetition) first = &result;
  }
  // Every prompt as one text, rendered before anything is sent.
  std::vector<std::string> prompt_texts;
  for (const auto& messages : render_prompts(plan)) prompt_texts.push_back(llmgate::prompt_text(messages));
  const auto text_of_prompt = [&](std::int64_t prompt) -> const std::string& {
    return prompt_texts.at(static_cast<std::size_t>(prompt));
  };
  const auto never = [](std::string_view name) {
    throw error(errc::invalid_request, "judge template: {{" + std::string(name) + "}} is not filled");  // checked above
  };

  std::vector<detail::judge_task> tasks;
  for (std::size_t j = 0; j < plan.judges.size(); ++j) {
    const judge_config& judge = plan.judges[j];
    const std::string_view text = judge_template(judge);
    if (judge.kind != judge_kind::choice) {
      std::map<std::string, std::uint64_t, std::less<>> judged_of;  // answers taken per candidate (max_answers)
      for (const request_result* answer : answers) {
        if (answer->request.candidate == plan.reference) continue;
        if (judge.max_answers > 0 && judged_of[answer->request.candidate]++ >= judge.max_answers) continue;
        if (already_scored(answer->request.key, methods[j])) continue;
        const request_result* reference = nullptr;
        if (judge.kind != judge_kind::scorer) {
          const auto same = reference_of.find({answer->request.prompt, answer->request.repetition});
          const auto first = first_reference_of.find(answer->request.prompt);
          reference = same != reference_of.end() ? same->second : first != first_reference_of.end() ? first->second : nullptr;
          if (!reference) continue;
        }
        const std::string& prompt = text_of_prompt(answer->request.prompt);
        const auto value = [&](std::string_view name) -> std::optional<std::string_view> {
          if (name == "prompt") return std::string_view(prompt);
          if (name == "answer") return std::string_view(answer->response);
          if (name == "reference" && reference) return std::string_view(reference->response);
          return std::nullopt;
        };
        tasks.push_back({.judge = j, .answers = {answer}, .question = fill_placeholders(text, value, never)});
      }
      continue;
    }
    // Choice groups, in the order their first answer comes; one answer per candidate.
    std::vector<std::pair<std::int64_t, std::int64_t>> group_order;
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const request_result*>> groups;
    for (const request_result* answer : answers) {
      const std::pair group{answer->request.prompt, answer->request.repetition};
      auto [found, made] = groups.try_emplace(group);
      if (made) group_order.push_back(group);
      bool taken = false;
      for (const auto* member : found->second) taken = taken || member->request.candidate == answer->request.candidate;
      if (!taken) found->second.push_back(answer);
    }
    std::uint64_t groups_taken = 0;
    for (const auto& group : group_order) {
      auto& members = groups[group];
      if (members.size() < 2) continue;
      if (judge.max_answers > 0 && groups_taken++ >= judge.max_answers) break;
      bool done = true;
      for (const auto* member : members) done = done && already_scored(member->request.key, methods[j]);
      if (done) continue;
      detail::judge_task task{.judge = j, .answers = members,
                              .shown = choice_order(members.size(), options.seed, group.first, group.second)};
      std::string shown_answers;
      for (std::size_t p = 0; p < members.size(); ++p) {
        task.labels.push_back(answer_label(p));
        if (p > 0) shown_answers += "\n\n";
        shown_answers += "Answer " + task.labels[p] + ":\n<<<\n" + members[task.shown[p]]->response + "\n>>>";
      }
      const std::string& prompt = text_of_prompt(group.first);
      const auto value = [&](std::string_view name) -> std::optional<std::string_view> {
        if (name == "prompt") return std::string_view(prompt);
        if (name == "answers") return std::string_view(shown_answers);
        return std::nullopt;
      };
      task.question = fill_placeholders(text, value, never);
      tasks.push_back(std::move(task));
    }
  }
  if (tasks.empty()) co_return std::vector<score_record>{};

  // Each task's records, filled as its verdict comes.
  std::vector<std::vector<score_record>> made(tasks.size());
  const std::chrono::milliseconds timeout(plan.request_timeout_ms);
  auto judge_one = [&](const detail::judge_task& task) -> net::awaitable<std::vector<score_record>> {
    const judge_config& judge = plan.judges[task.judge];
    chat_request request;
    if (const auto* candidate = plan.find_candidate(judge.candidate)) request.model = candidate->model;
    request.messages.push_back({.role = "user", .content = task.question});
    for (const auto& [name, value] : judge.sampling) set_field(request.parameters, name, boost::json::serialize(value));
    std::optional<judge_verdict> verdict;
    detail::judge_reply reply;
    for (int attempt = 0; attempt < 2 && !verdict; ++attempt) {  // a malformed answer is asked again, once
      reply = co_await detail::ask_judge(backends[task.judge], request, timeout);
      if (reply.error != request_failure::none) break;
      verdict = parse_judge_verdict(judge.kind, reply.text, task.labels);
    }
    std::string failed;
    if (reply.error != request_failure::none)
      failed = std::string(judge_error_prefix) + std::string(to_string(reply.error)) + ": " + reply.message;
    else if (!verdict)
      failed = std::string(judge_unparsed_prefix) + reply.text;
    std::vector<score_record> records;
    for (std::size_t m = 0; m < task.answers.size(); ++m) {
      score_record score{.request_key = task.answers[m]->request.key, .method = methods[task.judge]};
      if (!failed.empty()) {
        score.detail = failed;
      } else if (judge.kind != judge_kind::choice) {
        score.value = verdict->value;
        score.detail = verdict->reasoning;
      } else {
        std::size_t position = 0;
        while (task.shown[position] != m) ++position;
        score.value = position == verdict->choice ? 1.0 : 0.0;
        score.detail = "shown as " + task.labels[position] + "; chose " + task.labels[verdict->choice];
      }
      records.push_back(std::move(score));
    }
    co_return records;
  };

  std::size_t next = 0;  // the workers share it on the strand
  auto worker = [&]() -> net::awaitable<void> {
    while (next < tasks.size()) {
      const std::size_t index = next++;
      made[index] = co_await judge_one(tasks[index]);
      for (const auto& score : made[index]) record(score);
    }
  };
  const auto strand = net::make_strand(co_await net::this_coro::executor);
  using worker_operation = decltype(net::co_spawn(strand, worker(), net::deferred));
  std::vector<worker_operation> workers;
  const std::size_t count = std::min<std::size_t>(std::max<std::uint64_t>(plan.concurrency, 1), tasks.size());
  for (std::size_t w = 0; w < count; ++w) workers.push_back(net::co_spawn(strand, worker(), net::deferred));
  auto [order, failures] = co_await net::experimental::make_parallel_group(std::move(workers))
                               .async_wait(net::experimental::wait_for_one_error(), net::use_awaitable);
  for (const std::size_t first : order)  // the failure that stopped the others, not their cancellation
    if (failures[first]) std::rethrow_exception(failures[first]);

  std::vector<score_record> all;
  for (auto& records : made)
    for (auto& score : records) all.push_back(std::move(score));
  co_return all;
}

}  // namespace llmgate::inline v0
