// Reads the request stream the replay sends through the caches, from any
// of three formats, told apart by their content:
//
//   question pairs  JSON lines {"a","b","duplicate"} (QQP)
//   paraphrases     one JSON list of {"origin","similar"}
//   stream          JSON lines {"scope","text","answer"} (a user's own log;
//                   "scope" may be left out)
//
// Pairs carry no answers, so a question's true answer is the id of its
// duplicate cluster: connected components over the pairs labelled duplicate
// (every paraphrase pair is) and over questions whose normal form (Unicode
// case-folded, letters and digits only) is identical. A question whose
// normal form is empty ("?") is only the same as itself.
//
// Pair order: each pair's first question is asked before its second, the
// two interleaved with the other pairs' questions. Pair i (of n, in file
// order) asks its first question at time i and its second at time
// i + 1 + u_i, u_i uniform in [0, n) from mt19937_64 seeded with 42 (taken
// modulo n, which unlike std::uniform_int_distribution is the same with
// every standard library); requests are sorted by time, ties in file order.
// Second questions thus come 1 to n pair-times after their first, so the
// cache holds anything from a handful to all of the earlier questions when
// they arrive.
#pragma once

#include <algorithm>      // std::sort, std::min
#include <cstddef>        // std::size_t
#include <cstdint>        // std::uint32_t, std::uint64_t
#include <filesystem>     // std::filesystem::path
#include <fstream>        // std::ifstream
#include <iterator>       // std::istreambuf_iterator
#include <random>         // std::mt19937_64
#include <span>           // std::span
#include <stdexcept>      // std::runtime_error
#include <string>         // std::string
#include <string_view>    // std::string_view
#include <unordered_map>  // text -> id
#include <utility>        // std::move, std::pair
#include <vector>         // std::vector

#include <boost/json.hpp>  // boost::json::parse

#include <llmgate/cache/verifier_training.hpp>  // labelled_pair
#include <llmgate/embed/text.hpp>                // normalize_text

namespace replay {

/// One request of the stream.
struct request {
  std::uint32_t scope = 0;   ///< index into replay_stream::scopes
  std::uint32_t answer = 0;  ///< the true answer: a cluster id, or an interned answer text
  std::string text;
};

struct replay_stream {
  std::string format;               ///< which of the three formats the file was
  std::vector<std::string> scopes;  ///< tenant names, by index
  std::vector<request> requests;    ///< in the order they are replayed
  std::size_t answers = 0;          ///< distinct true answers (clusters)
};

/// One row of a question pair file.
using llmgate::labelled_pair;

/// A file that is none of the three formats, or a malformed row; the
/// message names the file and, where there is one, the line.
struct stream_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {

// Union-find over question ids, with path halving.
class disjoint_sets {
 public:
  std::uint32_t add() {
    parent_.push_back(static_cast<std::uint32_t>(parent_.size()));
    return parent_.back();
  }
  std::uint32_t find(std::uint32_t x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void unite(std::uint32_t a, std::uint32_t b) { parent_[find(a)] = find(b); }
  std::size_t size() const { return parent_.size(); }

 private:
  std::vector<std::uint32_t> parent_;
};

// Builds the stream of a pair file: questions, their clusters, the order.
class pair_stream_builder {
 public:
  void add_pair(const std::string& first, const std::string& second, bool duplicate) {
    const std::uint32_t a = question(first), b = question(second);
    if (duplicate) clusters_.unite(a, b);
    pairs_.push_back({{first, a}, {second, b}});
  }

  std::size_t pairs() const { return pairs_.size(); }

  replay_stream build(std::string format) && {
    replay_stream stream{std::move(format), {""}, {}, 0};
    // Cluster ids numbered 0.. in order of first appearance.
    std::vector<std::uint32_t> cluster_id(clusters_.size(), unnumbered);
    const auto answer_of = [&](std::uint32_t q) {
      auto& id = cluster_id[clusters_.find(q)];
      if (id == unnumbered) id = static_cast<std::uint32_t>(stream.answers++);
      return id;
    };
    struct timed {
      std::uint64_t time;
      std::size_t order;  // file order: pair i's first is 2i, its second 2i + 1
    };
    const std::size_t n = pairs_.size();
    std::vector<timed> times;
    times.reserve(2 * n);
    std::mt19937_64 random(42);
    for (std::size_t i = 0; i < n; ++i) {
      times.push_back({i, 2 * i});
      times.push_back({i + 1 + random() % n, 2 * i + 1});
    }
    std::sort(times.begin(), times.end(), [](const timed& x, const timed& y) {
      return x.time != y.time ? x.time < y.time : x.order < y.order;
    });
    stream.requests.reserve(times.size());
    for (const timed& t : times) {
      auto& [text, q] = t.order % 2 ? pairs_[t.order / 2].second : pairs_[t.order / 2].first;
      stream.requests.push_back({0, answer_of(q), std::move(text)});
    }
    return stream;
  }

 private:
  static constexpr std::uint32_t unnumbered = ~std::uint32_t{0};

  // A question's id: one per normal form, so identical forms share a cluster.
  std::uint32_t question(const std::string& text) {
    std::string key = llmgate::normalize_text(text, {.case_fold = true, .letters_and_digits_only = true});
    if (key.empty()) key = "\x01" + text;  // nothing left to compare: only itself (\x01 never survives)
    const auto [at, added] = ids_.try_emplace(std::move(key), 0);
    if (added) at->second = clusters_.add();
    return at->second;
  }

  struct asked {
    std::string text;
    std::uint32_t question;
  };
  std::unordered_map<std::string, std::uint32_t> ids_;
  disjoint_sets clusters_;
  std::vector<std::pair<asked, asked>> pairs_;
};

inline const boost::json::string& text_field(const boost::json::object& row, std::string_view name,
                                             const std::string& where) {
  const auto* value = row.if_contains(name);
  if (!value || !value->is_string())
    throw stream_error(where + ": \"" + std::string(name) + "\" missing or not a string");
  return value->get_string();
}

inline boost::json::object parse_row(std::string_view line, const std::string& where) {
  boost::system::error_code ec;
  auto value = boost::json::parse(line, ec);
  if (ec) throw stream_error(where + ": not JSON (" + ec.message() + ")");
  if (!value.is_object()) throw stream_error(where + ": not a JSON object");
  return std::move(value.get_object());
}

// Calls row(line, where) for each non-empty line until it returns false.
template <class Row>
void for_each_line(const std::string& content, const std::string& path, Row&& row) {
  std::size_t number = 0;
  for (std::size_t start = 0; start < content.size();) {
    std::size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    const std::string_view line(content.data() + start, end - start);
    ++number;
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (!row(line, path + ":" + std::to_string(number))) return;
  }
}

inline std::vector<labelled_pair> read_qqp_pairs(const std::string& content, const std::string& path,
                                                 std::size_t max_pairs) {
  std::vector<labelled_pair> pairs;
  for_each_line(content, path, [&](std::string_view line, const std::string& where) {
    if (pairs.size() == max_pairs) return false;
    const auto row = parse_row(line, where);
    const auto* duplicate = row.if_contains("duplicate");
    if (!duplicate || !duplicate->is_number())
      throw stream_error(where + ": \"duplicate\" missing or not a number");
    pairs.push_back({std::string(text_field(row, "a", where)), std::string(text_field(row, "b", where)),
                     duplicate->to_number<double>() == 1.0});
    return true;
  });
  return pairs;
}

// How many pairs `limit` requests take: limit / 2 rounded up (not
// (limit + 1) / 2: limit may be SIZE_MAX).
constexpr std::size_t pairs_for(std::size_t limit) { return limit / 2 + limit % 2; }

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw stream_error(path.string() + ": cannot be opened");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace detail

/// The stream of question pairs (the first limit/2 of them, rounded up,
/// then the stream cut at `limit`), ordered as described above.
inline replay_stream stream_of_pairs(std::span<const labelled_pair> pairs, std::string format,
                                     std::size_t limit) {
  detail::pair_stream_builder builder;
  for (const auto& p : pairs.first(std::min(pairs.size(), detail::pairs_for(limit))))
    builder.add_pair(p.a, p.b, p.duplicate);
  replay_stream stream = std::move(builder).build(std::move(format));
  if (stream.requests.size() > limit) stream.requests.resize(limit);
  return stream;
}

namespace detail {

inline replay_stream read_paraphrases(const std::string& content, const std::string& path, std::size_t limit) {
  boost::system::error_code ec;
  const auto document = boost::json::parse(content, ec);
  if (ec || !document.is_array()) throw stream_error(path + ": not a JSON list of {\"origin\",\"similar\"}");
  pair_stream_builder builder;
  for (std::size_t i = 0; i < document.get_array().size() && builder.pairs() < pairs_for(limit); ++i) {
    const std::string where = path + ": item " + std::to_string(i);
    const auto& item = document.get_array()[i];
    if (!item.is_object()) throw stream_error(where + ": not a JSON object");
    builder.add_pair(std::string(text_field(item.get_object(), "origin", where)),
                     std::string(text_field(item.get_object(), "similar", where)), true);
  }
  return std::move(builder).build("paraphrase pairs");
}

inline replay_stream read_jsonl_stream(const std::string& content, const std::string& path, std::size_t limit) {
  replay_stream stream{"request stream", {}, {}, 0};
  std::unordered_map<std::string, std::uint32_t> scope_ids, answer_ids;
  const auto intern = [](std::unordered_map<std::string, std::uint32_t>& ids, std::string key) {
    return ids.try_emplace(std::move(key), static_cast<std::uint32_t>(ids.size())).first->second;
  };
  for_each_line(content, path, [&](std::string_view line, const std::string& where) {
    if (stream.requests.size() == limit) return false;
    const auto row = parse_row(line, where);
    const auto* scope = row.if_contains("scope");
    if (scope && !scope->is_string()) throw stream_error(where + ": \"scope\" is not a string");
    const auto* answer = row.if_contains("answer");
    if (!answer) throw stream_error(where + ": \"answer\" missing");
    const std::string scope_name = scope ? std::string(scope->get_string()) : std::string();
    const std::uint32_t scope_id = intern(scope_ids, scope_name);
    if (scope_id == stream.scopes.size()) stream.scopes.push_back(scope_name);
    // Any JSON answer will do: equal answers serialise equally.
    const std::string answer_text =
        answer->is_string() ? std::string(answer->get_string()) : boost::json::serialize(*answer);
    stream.requests.push_back(
        {scope_id, intern(answer_ids, answer_text), std::string(text_field(row, "text", where))});
    return true;
  });
  stream.answers = answer_ids.size();
  return stream;
}

}  // namespace detail

/// Reads at most `limit` requests from `path` (of a pair file: its first
/// limit/2 pairs, rounded up, then the stream cut at `limit`). Throws
/// stream_error when the file cannot be read or is none of the formats.
inline replay_stream read_stream(const std::filesystem::path& path, std::size_t limit) {
  const std::string content = detail::read_file(path);
  const std::string name = path.string();

  const std::size_t first = content.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw stream_error(name + ": empty");
  replay_stream stream;
  if (content[first] == '[') {
    stream = detail::read_paraphrases(content, name, limit);
  } else {
    // The first row's fields tell the two line formats apart.
    const std::size_t end = content.find('\n', first);
    const auto row = detail::parse_row(std::string_view(content).substr(first, end - first), name + ": first row");
    if (row.contains("a") && row.contains("b"))
      stream = stream_of_pairs(detail::read_qqp_pairs(content, name, detail::pairs_for(limit)),
                               "question pairs (QQP)", limit);
    else if (row.contains("text"))
      stream = detail::read_jsonl_stream(content, name, limit);
    else
      throw stream_error(name +
                         ": neither question pairs {\"a\",\"b\",\"duplicate\"} nor a stream "
                         "{\"scope\",\"text\",\"answer\"}");
  }
  if (stream.requests.size() > limit) stream.requests.resize(limit);
  if (stream.requests.empty()) throw stream_error(name + ": no requests");
  return stream;
}

}  // namespace replay
