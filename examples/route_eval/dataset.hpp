// Reads per-query outcomes of real models, in the two formats of
// ../shared/data/routing (see ../shared/data/README.md):
//
//   routerbench  CSV (quoted fields may span lines): prompt, eval_name,
//                one score column per model (1 right, 0 wrong; blank:
//                no answer, counted wrong), "<model>|total_cost" in USD,
//                "<model>|model_response" (the answer it gave)
//   dcrouter     JSON list of {"question", "scores": {model: 0..1}}, with
//                prices per million tokens in default_llm.json beside it
//                (else in the data folder's dcrouter/)
//
// dcrouter records no cost, so a query's cost is estimated: its input
// tokens as bytes / 4, plus an answer of 256 tokens, at the model's prices.
// A routerbench prompt is stored as a Python list literal (['...'] with
// escaped newlines); it is turned back into the text the models saw.
#pragma once

#include <algorithm>   // std::sort, std::find
#include <cstddef>     // std::size_t
#include <filesystem>  // std::filesystem::path
#include <fstream>     // std::ifstream
#include <iterator>    // std::istreambuf_iterator
#include <stdexcept>   // std::runtime_error
#include <string>      // std::string
#include <string_view> // std::string_view
#include <type_traits> // std::remove_cvref_t
#include <vector>      // std::vector

#include <boost/json.hpp>  // boost::json::parse

#include <llmgate/route/routing_outcome.hpp>

namespace route_eval {

/// One query with every model's outcome, models in the dataset's order
/// (answers recorded for routerbench only).
using query = llmgate::routing_outcome;

struct dataset {
  std::string name;    ///< the file's name without extension and _train / _test
  std::string format;  ///< "routerbench" or "dcrouter"
  std::vector<std::string> models;
  std::vector<query> queries;  ///< in file order
};

inline constexpr double assumed_answer_tokens = 256;

namespace detail {

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path.string() + "'");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// RFC 4180 rows: fields separated by commas, quoted fields may hold commas,
// doubled quotes and line breaks.
inline std::vector<std::vector<std::string>> parse_csv(std::string_view text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      rows.back().push_back(std::move(field));
      field.clear();
      rows.emplace_back();
    } else {
      field += c;
    }
  }
  if (!field.empty() || !rows.back().empty()) rows.back().push_back(std::move(field));
  if (rows.back().empty()) rows.pop_back();
  return rows;
}

// "['line one\\nline two']" -> "line one\nline two".
inline std::string unwrap_python_list(std::string_view literal) {
  if (literal.size() >= 4 && literal.starts_with("[") && literal.ends_with("]")) {
    literal = literal.substr(1, literal.size() - 2);
    if (literal.size() >= 2 && (literal.front() == '\'' || literal.front() == '"') && literal.back() == literal.front())
      literal = literal.substr(1, literal.size() - 2);
  }
  std::string text;
  for (std::size_t i = 0; i < literal.size(); ++i) {
    if (literal[i] == '\\' && i + 1 < literal.size()) {
      const char next = literal[++i];
      text += next == 'n' ? '\n' : next == 't' ? '\t' : next;
    } else {
      text += literal[i];
    }
  }
  return text;
}

inline double number_or_zero(const std::string& field) { return field.empty() ? 0.0 : std::stod(field); }

}  // namespace detail

/// "arc_challenge_test.csv" -> "arc_challenge"; a file named just train or
/// test takes its folder's name ("dcrouter/train.json" -> "dcrouter").
inline std::string dataset_name(const std::filesystem::path& path) {
  std::string stem = path.stem().string();
  for (const std::string_view suffix : {"_train", "_test"})
    if (stem.ends_with(suffix)) stem.resize(stem.size() - suffix.size());
  if (stem == "train" || stem == "test") stem = path.parent_path().filename().string();
  return stem;
}

inline dataset read_routerbench(const std::filesystem::path& path) {
  const auto rows = detail::parse_csv(detail::read_file(path));
  if (rows.size() < 2) throw std::runtime_error("'" + path.string() + "' has no data rows");
  const auto& header = rows.front();
  const auto column = [&](std::string_view name) {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    throw std::runtime_error("'" + path.string() + "' has no column '" + std::string(name) + "'");
  };
  dataset d{dataset_name(path), "routerbench", {}, {}};
  std::vector<std::size_t> score_columns, cost_columns, answer_columns;
  for (std::size_t c = 0; c < header.size(); ++c)
    if (header[c].ends_with("|total_cost")) {
      d.models.push_back(header[c].substr(0, header[c].size() - std::string_view("|total_cost").size()));
      cost_columns.push_back(c);
      score_columns.push_back(column(d.models.back()));
      answer_columns.push_back(column(d.models.back() + "|model_response"));
    }
  const std::size_t prompt = column("prompt"), task = column("eval_name");
  for (std::size_t r = 1; r < rows.size(); ++r) {
    const auto& row = rows[r];
    if (row.size() != header.size())
      throw std::runtime_error("'" + path.string() + "': row " + std::to_string(r) + " has " +
                               std::to_string(row.size()) + " fields, the header " + std::to_string(header.size()));
    query q{detail::unwrap_python_list(row[prompt]), row[task], {}, {}, {}};
    for (std::size_t m = 0; m < d.models.size(); ++m) {
      q.score.push_back(static_cast<float>(detail::number_or_zero(row[score_columns[m]])));
      q.cost.push_back(detail::number_or_zero(row[cost_columns[m]]));
      q.answer.push_back(detail::unwrap_python_list(row[answer_columns[m]]));
    }
    d.queries.push_back(std::move(q));
  }
  return d;
}

/// `prices`: default_llm.json ({model: {"input_price", "output_price"}}).
inline dataset read_dcrouter(const std::filesystem::path& path, const std::filesystem::path& prices) {
  const auto document = boost::json::parse(detail::read_file(path));
  const auto price_list = boost::json::parse(detail::read_file(prices));
  dataset d{dataset_name(path), "dcrouter", {}, {}};
  const auto& entries = document.as_array();
  if (entries.empty()) throw std::runtime_error("'" + path.string() + "' holds no queries");
  for (const auto& [model, score] : entries.front().at("scores").as_object()) d.models.emplace_back(model);
  std::vector<double> input_price, output_price;
  for (const auto& model : d.models) {
    const auto* listed = price_list.as_object().if_contains(model);
    if (!listed) throw std::runtime_error("'" + prices.string() + "' has no price for '" + model + "'");
    input_price.push_back(listed->at("input_price").to_number<double>());
    output_price.push_back(listed->at("output_price").to_number<double>());
  }
  for (const auto& entry : entries) {
    query q{std::string(entry.at("question").as_string()), {}, {}, {}, {}};
    const double input_tokens = static_cast<double>(q.text.size()) / 4.0;
    const auto& scores = entry.at("scores").as_object();
    for (std::size_t m = 0; m < d.models.size(); ++m) {
      q.score.push_back(scores.at(d.models[m]).to_number<float>());
      q.cost.push_back((input_tokens * input_price[m] + assumed_answer_tokens * output_price[m]) / 1e6);
    }
    d.queries.push_back(std::move(q));
  }
  return d;
}

/// `d` with its models in the order of `models` (its queries' scores,
/// costs and answers reordered alike), so that files of one format whose
/// columns or keys come in another order are read as one. Throws
/// std::runtime_error when `d` lacks one of `models`.
inline void order_models_as(dataset& d, const std::vector<std::string>& models) {
  std::vector<std::size_t> from;
  for (const auto& model : models) {
    const auto at = std::find(d.models.begin(), d.models.end(), model);
    if (at == d.models.end())
      throw std::runtime_error("'" + d.name + "' has no outcomes of '" + model + "', which the learning data has");
    from.push_back(static_cast<std::size_t>(at - d.models.begin()));
  }
  const auto reordered = [&](const auto& values) {
    std::remove_cvref_t<decltype(values)> out;
    for (const auto f : from) out.push_back(values[f]);
    return out;
  };
  for (auto& q : d.queries) {
    q.score = reordered(q.score);
    q.cost = reordered(q.cost);
    if (!q.answer.empty()) q.answer = reordered(q.answer);
  }
  d.models = models;
}

/// Every dataset file under `folder` (recursively), by format: *.csv as
/// routerbench, *.json other than default_llm.json as dcrouter, priced by
/// the default_llm.json beside it or else `fallback_prices`. Sorted by path.
inline std::vector<dataset> read_folder(const std::filesystem::path& folder,
                                        const std::filesystem::path& fallback_prices) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder))
    if (entry.is_regular_file() && (entry.path().extension() == ".csv" ||
                                    (entry.path().extension() == ".json" && entry.path().filename() != "default_llm.json")))
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<dataset> sets;
  for (const auto& file : files) {
    if (file.extension() == ".csv") {
      sets.push_back(read_routerbench(file));
    } else {
      const auto beside = file.parent_path() / "default_llm.json";
      sets.push_back(read_dcrouter(file, std::filesystem::exists(beside) ? beside : fallback_prices));
    }
  }
  return sets;
}

}  // namespace route_eval
