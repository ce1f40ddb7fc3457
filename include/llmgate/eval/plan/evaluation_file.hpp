// evaluation_file: the evaluation's JSON file, read into an evaluation_plan
// and checked whole before anything is sent. Every mistake is refused
// naming its field by JSON path ("candidates[1].backend names \"gpt\",
// which is not in backends"), a misspelt key with the key meant.
//
//   {
//     "backends":   [{"name": "hosted", "kind": "openai", "base_url": "https://...", "api_key_env": "KEY"}],
//     "candidates": [{"name": "large", "backend": "hosted", "model": "gpt-4o",
//                     "price": {"input_per_1k": 0.0025, "output_per_1k": 0.01}},
//                    {"name": "small", "gguf": "models/small.gguf", "sampling": {"temperature": 0.7},
//                     "price": {"instance_per_hour": 0.5, "utilization": 0.8}}],
//     "reference":  "large",
//     "templates":  [{"name": "briefing", "messages": [{"role": "user", "content": "Plan my day: {{tasks}}"}]}],
//     "prompts":    [{"template": "briefing", "variables": {"tasks": "..."}}],   (or "prompts_file": "set.jsonl")
//     "repetitions": 3, "warmup": 2, "concurrency": 4, "request_timeout_ms": 60000,
//     "sampling":   {"max_tokens": 128},
//     "scorers":    ["tfidf", "bleu", "embedding", "sem_bleu"],
//     "embedders":  [{"name": "hashing"}, {"name": "small", "candidate": "small"}],
//     "judges":     [{"kind": "scorer", "candidate": "large"}, {"kind": "choice", "candidate": "large",
//                     "template_file": "my_choice.txt", "max_answers": 100}],   (max_answers: each candidate's
//                                                first answers only, for judges that cost too much to ask about all)
//     "agreement_bottom_k": 2,
//     "schedule":   {"requests": 10, "every_seconds": 3600, "duration_seconds": 86400}
//   }
//
// Paths (gguf, prompts_file, template_file) are relative to the file's folder.
#pragma once

#include <algorithm>    // std::find, std::any_of
#include <array>        // std::array
#include <cstdio>       // std::snprintf
#include <filesystem>   // std::filesystem::path
#include <fstream>      // std::ifstream
#include <iterator>     // std::istreambuf_iterator
#include <span>         // std::span
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move

#include <boost/json/parse.hpp>      // boost::json::parse
#include <boost/json/serialize.hpp>  // boost::json::serialize

#include "llmgate/backend/backend_config.hpp"     // builtin_backend_kinds, detail::read_backends
#include "llmgate/config/config_reader.hpp"       // config_error, detail::config_reader, refuse, only_known_keys
#include "llmgate/detail/name_set.hpp"            // name_set (names must not repeat)
#include "llmgate/detail/xxhash.hpp"              // XXH3_64bits
#include "llmgate/eval/plan/evaluation_plan.hpp"  // evaluation_plan

namespace llmgate::inline v0 {

/// A plan and the fingerprint of what it was read from (the file and its
/// prompt set), which ties a run store to it.
struct evaluation_file {
  evaluation_plan plan;
  std::string fingerprint;

  /// Reads and checks `path`. Throws config_error naming the file and the field.
  static evaluation_file load(const std::filesystem::path& path,
                              std::span<const std::string_view> kinds = builtin_backend_kinds);

  /// Reads and checks the JSON form; `folder` is where relative paths start.
  static evaluation_file from_json(const boost::json::value& value, const std::filesystem::path& folder,
                                   std::span<const std::string_view> kinds = builtin_backend_kinds);
};

namespace detail {

inline constexpr std::array<std::string_view, 8> sampling_keys = {
    "temperature", "top_p", "top_k", "max_tokens", "seed", "stop", "presence_penalty", "frequency_penalty"};
inline constexpr std::array<std::string_view, 4> scorer_names = {"tfidf", "bleu", "embedding", "sem_bleu"};
inline constexpr std::array<std::string_view, 4> judge_kind_names = {"scorer", "comparer", "comparer_reasoning", "choice"};

inline std::string read_text_file(const std::filesystem::path& path, std::string_view field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(field, "cannot read '" + path.string() + "'");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline boost::json::object read_sampling(const boost::json::object& section, std::string_view where) {
  const auto* sampling = config_reader::object(section, "sampling", where);
  if (!sampling) return {};
  const std::string path = config_path(where, "sampling");
  only_known_keys(*sampling, path, sampling_keys);
  if (const auto* t = sampling->if_contains("temperature")) {
    if (!t->is_number()) refuse(config_path(path, "temperature"), "must be a number");
    within(config_path(path, "temperature"), t->to_number<double>(), 0.0, 2.0);
  }
  if (const auto* p = sampling->if_contains("top_p")) {
    if (!p->is_number()) refuse(config_path(path, "top_p"), "must be a number");
    fraction(config_path(path, "top_p"), p->to_number<double>(), true);
  }
  for (const std::string_view key : {"top_k", "max_tokens", "seed"})
    (void)config_reader::count(*sampling, key, path, 0);
  return *sampling;
}

inline evaluation_price read_candidate_price(const boost::json::object& entry, std::string_view where) {
  using read = config_reader;
  evaluation_price price;
  const auto* section = read::object(entry, "price", where);
  if (!section) return price;
  const std::string path = config_path(where, "price");
  only_known_keys(*section, path, {"input_per_1k", "output_per_1k", "instance_per_hour", "utilization"});
  price.input_per_1k = read::number(*section, "input_per_1k", path, 0);
  price.output_per_1k = read::number(*section, "output_per_1k", path, 0);
  price.instance_per_hour = read::number(*section, "instance_per_hour", path, 0);
  price.utilization = read::number(*section, "utilization", path, price.utilization);
  for (const auto& [key, value] : {std::pair{"input_per_1k", price.input_per_1k}, std::pair{"output_per_1k", price.output_per_1k},
                                   std::pair{"instance_per_hour", price.instance_per_hour}})
    within(config_path(path, key), value, 0.0, 1e9);
  fraction(config_path(path, "utilization"), price.utilization, true);
  if (price.self_hosted() && (price.input_per_1k > 0 || price.output_per_1k > 0))
    refuse(path, "prices either tokens (input_per_1k, output_per_1k) or an instance (instance_per_hour), not both");
  return price;
}

inline std::vector<chat_message> read_messages(const boost::json::object& entry, std::string_view where) {
  using read = config_reader;
  const auto* messages = read::array(entry, "messages", where);
  const std::string path = config_path(where, "messages");
  if (!messages || messages->empty()) refuse(path, "must list at least one message");
  std::vector<chat_message> out;
  for (std::size_t i = 0; i < messages->size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const auto& message = read::object_at((*messages)[i], at);
    only_known_keys(message, at, {"role", "content"});
    chat_message m{.role = read::string(message, "role", at), .content = read::string(message, "content", at)};
    if (m.role != "system" && m.role != "user" && m.role != "assistant")
      refuse(config_path(at, "role"), "must be \"system\", \"user\" or \"assistant\" (not \"" + m.role + "\")");
    out.push_back(std::move(m));
  }
  return out;
}

// A prompt of the list, which must name one of `templates` (or leave the
// name out when there is only one).
inline evaluation_prompt read_prompt(const boost::json::value& value, const std::string& where,
                                     const evaluation_plan& plan, const name_set& templates) {
  using read = config_reader;
  const auto& entry = read::object_at(value, where);
  only_known_keys(entry, where, {"template", "variables"});
  evaluation_prompt prompt{.template_name = read::string(entry, "template", where), .variables = {}};
  if (prompt.template_name.empty() && plan.templates.size() == 1) prompt.template_name = plan.templates.front().name;
  if (!templates.contains(prompt.template_name))
    refuse(config_path(where, "template"), "names \"" + prompt.template_name + "\", which is not in templates");
  if (const auto* variables = read::object(entry, "variables", where))
    for (const auto& [name, text] : *variables) {
      if (!text.is_string()) refuse(config_path(config_path(where, "variables"), name), "must be a string");
      prompt.variables.emplace(std::string(name), std::string(text.get_string()));
    }
  return prompt;
}

// The candidate `name` names, at `path`: refused when there is none.
inline void must_be_candidate(const name_set& candidates, std::string_view name, std::string_view path) {
  if (!candidates.contains(name)) refuse(path, "names \"" + std::string(name) + "\", which is not in candidates");
}

}  // namespace detail

inline evaluation_file evaluation_file::from_json(const boost::json::value& value, const std::filesystem::path& folder,
                                                  std::span<const std::string_view> kinds) {
  using read = detail::config_reader;
  using detail::only_known_keys;
  using detail::config_path;
  using detail::refuse;
  evaluation_file file;
  auto& plan = file.plan;
  std::string fingerprinted = boost::json::serialize(value);
  const auto& root = read::object_at(value, "the file");
  only_known_keys(root, "", {"backends", "candidates", "reference", "templates", "prompts", "prompts_file",
                             "repetitions", "warmup", "concurrency", "request_timeout_ms", "sampling", "scorers",
                             "embedders", "judges", "agreement_bottom_k", "schedule"});

  if (const auto* backends = read::array(root, "backends", "")) plan.backends = detail::read_backends(*backends, "backends", kinds);

  const auto* candidates = read::array(root, "candidates", "");
  if (!candidates || candidates->size() < 2) refuse("candidates", "must list at least two candidates (the reference among them)");
  detail::name_set backend_names, candidate_names, template_names, embedder_names;
  for (const auto& backend : plan.backends) backend_names.insert(backend.name);
  for (std::size_t i = 0; i < candidates->size(); ++i) {
    const std::string where = "candidates[" + std::to_string(i) + "]";
    const auto& entry = read::object_at((*candidates)[i], where);
    only_known_keys(entry, where, {"name", "backend", "model", "gguf", "sampling", "price"});
    evaluation_candidate c{.name = read::string(entry, "name", where), .backend = read::string(entry, "backend", where),
                           .model = read::string(entry, "model", where)};
    if (c.name.empty()) refuse(config_path(where, "name"), "must be a non-empty string");
    if (!candidate_names.insert(c.name).second) refuse(config_path(where, "name"), "repeats \"" + c.name + "\"");
    const std::string gguf = read::string(entry, "gguf", where);
    if (gguf.empty() == c.backend.empty()) refuse(where, "must name either a backend or a gguf file, one of them");
    if (!gguf.empty()) {
      std::error_code ec;
      c.gguf = std::filesystem::weakly_canonical(folder / gguf, ec);  // as the report shows it: no "../"
      if (ec) c.gguf = folder / gguf;
      if (!std::filesystem::is_regular_file(c.gguf, ec)) refuse(config_path(where, "gguf"), "cannot read '" + c.gguf.string() + "'");
    } else if (!backend_names.contains(c.backend)) {
      refuse(config_path(where, "backend"), "names \"" + c.backend + "\", which is not in backends");
    }
    c.sampling = detail::read_sampling(entry, where);
    c.price = detail::read_candidate_price(entry, where);
    plan.candidates.push_back(std::move(c));
  }
  plan.reference = read::string(root, "reference", "");
  if (plan.reference.empty()) refuse("reference", "must name the candidate whose answers are the reference");
  detail::must_be_candidate(candidate_names, plan.reference, "reference");

  const auto* templates = read::array(root, "templates", "");
  if (!templates || templates->empty()) refuse("templates", "must list at least one prompt template");
  for (std::size_t i = 0; i < templates->size(); ++i) {
    const std::string where = "templates[" + std::to_string(i) + "]";
    const auto& entry = read::object_at((*templates)[i], where);
    only_known_keys(entry, where, {"name", "messages"});
    prompt_template t{.name = read::string(entry, "name", where), .messages = detail::read_messages(entry, where)};
    if (t.name.empty()) refuse(config_path(where, "name"), "must be a non-empty string");
    if (!template_names.insert(t.name).second) refuse(config_path(where, "name"), "repeats \"" + t.name + "\"");
    plan.templates.push_back(std::move(t));
  }

  const auto* prompts = read::array(root, "prompts", "");
  const std::string prompts_file = read::string(root, "prompts_file", "");
  if ((prompts != nullptr) == !prompts_file.empty()) refuse("prompts", "must be given inline or as prompts_file, one of them");
  if (prompts) {
    for (std::size_t i = 0; i < prompts->size(); ++i)
      plan.prompts.push_back(detail::read_prompt((*prompts)[i], "prompts[" + std::to_string(i) + "]", plan, template_names));
  } else {
    const auto path = folder / prompts_file;
    const std::string text = detail::read_text_file(path, "prompts_file");
    fingerprinted += text;
    std::size_t line_number = 0;
    for (std::size_t start = 0; start < text.size();) {
      const auto end = std::min(text.find('\n', start), text.size());
      const std::string_view line(text.data() + start, end - start);
      start = end + 1;
      ++line_number;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      const std::string where = path.filename().string() + " line " + std::to_string(line_number);
      boost::system::error_code ec;
      const auto entry = boost::json::parse(line, ec);
      if (ec) refuse(where, "is not JSON: " + ec.message());
      plan.prompts.push_back(detail::read_prompt(entry, where, plan, template_names));
    }
  }
  if (plan.prompts.empty()) refuse(prompts ? "prompts" : "prompts_file", "must hold at least one prompt");

  plan.repetitions = read::count(root, "repetitions", "", plan.repetitions);
  detail::within<std::uint64_t>("repetitions", plan.repetitions, 1, 1000);
  plan.warmup = read::count(root, "warmup", "", plan.warmup);
  detail::within<std::uint64_t>("warmup", plan.warmup, 0, 1000);
  plan.concurrency = read::count(root, "concurrency", "", plan.concurrency);
  detail::within<std::uint64_t>("concurrency", plan.concurrency, 1, 1024);
  plan.request_timeout_ms = read::count(root, "request_timeout_ms", "", plan.request_timeout_ms);
  detail::within<std::uint64_t>("request_timeout_ms", plan.request_timeout_ms, 1, 3'600'000);
  plan.sampling = detail::read_sampling(root, "");

  if (root.contains("scorers")) {
    plan.scorers = read::strings(root, "scorers", "");
    for (std::size_t i = 0; i < plan.scorers.size(); ++i)
      if (std::find(detail::scorer_names.begin(), detail::scorer_names.end(), plan.scorers[i]) == detail::scorer_names.end())
        refuse("scorers[" + std::to_string(i) + "]", "must be one of tfidf, bleu, embedding, sem_bleu (not \"" + plan.scorers[i] + "\")");
  }
  if (const auto* embedders = read::array(root, "embedders", "")) {
    plan.embedders.clear();
    for (std::size_t i = 0; i < embedders->size(); ++i) {
      const std::string where = "embedders[" + std::to_string(i) + "]";
      const auto& entry = read::object_at((*embedders)[i], where);
      only_known_keys(entry, where, {"name", "candidate", "model"});
      evaluation_embedder e{.name = read::string(entry, "name", where), .candidate = read::string(entry, "candidate", where),
                            .model = read::string(entry, "model", where)};
      if (e.name.empty()) refuse(config_path(where, "name"), "must be a non-empty string");
      if (!embedder_names.insert(e.name).second) refuse(config_path(where, "name"), "repeats \"" + e.name + "\"");
      if (!e.candidate.empty()) detail::must_be_candidate(candidate_names, e.candidate, config_path(where, "candidate"));
      plan.embedders.push_back(std::move(e));
    }
  }
  const bool needs_embedders = std::any_of(plan.scorers.begin(), plan.scorers.end(),
                                           [](const std::string& s) { return s == "embedding" || s == "sem_bleu"; });
  if (needs_embedders && plan.embedders.empty()) refuse("embedders", "must list an embedder for the embedding and sem_bleu scorers");

  if (const auto* judges = read::array(root, "judges", "")) {
    for (std::size_t i = 0; i < judges->size(); ++i) {
      const std::string where = "judges[" + std::to_string(i) + "]";
      const auto& entry = read::object_at((*judges)[i], where);
      only_known_keys(entry, where, {"kind", "candidate", "template", "template_file", "sampling", "max_answers"});
      const std::string kind = read::string(entry, "kind", where);
      const auto found = std::find(detail::judge_kind_names.begin(), detail::judge_kind_names.end(), kind);
      if (found == detail::judge_kind_names.end())
        refuse(config_path(where, "kind"), "must be one of scorer, comparer, comparer_reasoning, choice (not \"" + kind + "\")");
      judge_config j{.kind = static_cast<judge_kind>(found - detail::judge_kind_names.begin()),
                     .candidate = read::string(entry, "candidate", where), .template_text = read::string(entry, "template", where)};
      detail::must_be_candidate(candidate_names, j.candidate, config_path(where, "candidate"));
      const std::string template_file = read::string(entry, "template_file", where);
      if (!template_file.empty() && !j.template_text.empty()) refuse(where, "gives template and template_file; give one");
      if (!template_file.empty()) {
        j.template_text = detail::read_text_file(folder / template_file, config_path(where, "template_file"));
        fingerprinted += j.template_text;
      }
      j.sampling = detail::read_sampling(entry, where);
      j.max_answers = read::count(entry, "max_answers", where, 0);
      plan.judges.push_back(std::move(j));
    }
  }
  plan.agreement_bottom_k = read::count(root, "agreement_bottom_k", "", plan.agreement_bottom_k);
  detail::within<std::uint64_t>("agreement_bottom_k", plan.agreement_bottom_k, 1, plan.candidates.size());

  if (const auto* schedule = read::object(root, "schedule", "")) {
    only_known_keys(*schedule, "schedule", {"requests", "every_seconds", "duration_seconds"});
    plan.schedule.requests = read::count(*schedule, "requests", "schedule", 0);
    plan.schedule.every_seconds = read::number(*schedule, "every_seconds", "schedule", plan.schedule.every_seconds);
    plan.schedule.duration_seconds = read::number(*schedule, "duration_seconds", "schedule", 0);
    detail::within<std::uint64_t>("schedule.requests", plan.schedule.requests, 0, 10'000);
    detail::within("schedule.every_seconds", plan.schedule.every_seconds, 0.001, 86'400.0);
    detail::within("schedule.duration_seconds", plan.schedule.duration_seconds, 0.0, 31.0 * 86'400);
  }

  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(fingerprinted.data(), fingerprinted.size())));
  file.fingerprint = hex;
  return file;
}

inline evaluation_file evaluation_file::load(const std::filesystem::path& path, std::span<const std::string_view> kinds) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error("evaluation: cannot read '" + path.string() + "'", errc::io_failure);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  boost::system::error_code ec;
  const auto value = boost::json::parse(text, ec);
  if (ec) throw config_error("evaluation: '" + path.string() + "' is not JSON: " + ec.message());
  try {
    return from_json(value, path.parent_path(), kinds);
  } catch (const config_error& e) {
    // "config: <field> ..." from the shared readers becomes "<file>: <field> ...".
    std::string_view what = e.what();
    if (what.starts_with("config: ")) what.remove_prefix(8);
    throw config_error(path.filename().string() + ": " + std::string(what));
  }
}

}  // namespace llmgate::inline v0
