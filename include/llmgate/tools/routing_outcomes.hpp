// routing_outcomes: labelled routing outcomes (route/routing_outcome.hpp)
// from the files they come in, for route_eval and the gateway's router:
//
//   RouterBench CSV  prompt, eval_name, one score column per model (1
//                    right, 0 wrong; blank: no answer, counted wrong),
//                    "<model>|total_cost" in USD and "<model>|model_response"
//                    (the answer it gave)
//   dcrouter JSON    a list of {"question", "scores": {model: 0..1}}; no cost
//                    is recorded, so a question's cost is estimated: its
//                    input tokens as bytes / 4 plus an answer of 256 tokens,
//                    at the model's price (a price_table; read_dcrouter_prices
//                    reads dcrouter's default_llm.json into one)
//
// A RouterBench prompt is stored as a Python list literal (['...'] with
// escaped newlines); it is turned back into the text the models saw.
// Everything that cannot be read throws llmgate::error naming the file:
// io_failure when it cannot be read, corrupt_file for content (with the
// line of a CSV record).
#pragma once

#include <algorithm>    // std::sort, std::find
#include <cstddef>      // std::size_t
#include <exception>    // std::exception (std::stod's)
#include <filesystem>   // std::filesystem::path
#include <fstream>      // std::ifstream
#include <iterator>     // std::istreambuf_iterator
#include <string>       // std::string, std::stod, std::to_string
#include <string_view>  // std::string_view
#include <type_traits>  // std::remove_cvref_t
#include <vector>       // std::vector

#include <boost/json/parse.hpp>  // boost::json::parse
#include <boost/json/value.hpp>  // boost::json::value

#include "llmgate/backend/price_table.hpp"  // price_table, model_price
#include "llmgate/detail/csv_records.hpp"   // parse_csv
#include "llmgate/error.hpp"                // llmgate::error, errc
#include "llmgate/route/routing_outcome.hpp"

namespace llmgate::inline v0 {

/// One file's outcomes, models in the file's order.
struct routing_dataset {
  std::string name;    ///< the file's name without extension and _train / _test
  std::string format;  ///< "routerbench" or "dcrouter"
  std::vector<std::string> models;
  std::vector<routing_outcome> outcomes;  ///< in file order
};

/// The answer length a dcrouter question is priced with.
inline constexpr double dcrouter_answer_tokens = 256;

namespace detail {

inline std::string read_outcomes_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(errc::io_failure, "cannot read routing outcomes from '" + path.string() + "'");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline boost::json::value parse_outcomes_json(const std::filesystem::path& path) {
  boost::system::error_code ec;
  auto value = boost::json::parse(read_outcomes_file(path), ec);
  if (ec) throw error(errc::corrupt_file, "'" + path.string() + "' is not JSON: " + ec.message());
  return value;
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

}  // namespace detail

/// "arc_challenge_test.csv" -> "arc_challenge"; a file named just train or
/// test takes its folder's name ("dcrouter/train.json" -> "dcrouter").
inline std::string routing_dataset_name(const std::filesystem::path& path) {
  std::string stem = path.stem().string();
  for (const std::string_view suffix : {"_train", "_test"})
    if (stem.ends_with(suffix)) stem.resize(stem.size() - suffix.size());
  if (stem == "train" || stem == "test") stem = path.parent_path().filename().string();
  return stem;
}

inline routing_dataset read_routerbench(const std::filesystem::path& path) {
  std::vector<detail::csv_error> errors;
  const auto records = detail::parse_csv(detail::read_outcomes_file(path), errors);
  const auto refuse = [&](std::size_t line, const std::string& what) {
    throw error(errc::corrupt_file, "'" + path.string() + "' line " + std::to_string(line) + ": " + what);
  };
  if (!errors.empty()) refuse(errors.front().line, errors.front().what);
  if (records.size() < 2) throw error(errc::corrupt_file, "'" + path.string() + "' has no data rows");
  const auto& header = records.front().fields;
  const auto column = [&](std::string_view name) {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return c;
    refuse(records.front().line, "no column '" + std::string(name) + "'");
    return std::size_t{0};
  };
  routing_dataset d{routing_dataset_name(path), "routerbench", {}, {}};
  std::vector<std::size_t> score_columns, cost_columns, answer_columns;
  constexpr std::string_view cost_suffix = "|total_cost";
  for (std::size_t c = 0; c < header.size(); ++c)
    if (header[c].ends_with(cost_suffix)) {
      d.models.push_back(header[c].substr(0, header[c].size() - cost_suffix.size()));
      cost_columns.push_back(c);
      score_columns.push_back(column(d.models.back()));
      answer_columns.push_back(column(d.models.back() + "|model_response"));
    }
  if (d.models.empty()) refuse(records.front().line, "no '<model>|total_cost' column");
  const std::size_t prompt = column("prompt"), task = column("eval_name");
  const auto number = [&](const std::string& field, std::size_t line) {
    if (field.empty()) return 0.0;
    try {
      return std::stod(field);
    } catch (const std::exception&) {
      refuse(line, "'" + field + "' is not a number");
      return 0.0;
    }
  };
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& [line, row] = records[r];
    if (row.size() != header.size())
      refuse(line, std::to_string(row.size()) + " fields, the header " + std::to_string(header.size()));
    routing_outcome o{detail::unwrap_python_list(row[prompt]), row[task], {}, {}, {}};
    for (std::size_t m = 0; m < d.models.size(); ++m) {
      o.score.push_back(static_cast<float>(number(row[score_columns[m]], line)));
      o.cost.push_back(number(row[cost_columns[m]], line));
      o.answer.push_back(detail::unwrap_python_list(row[answer_columns[m]]));
    }
    d.outcomes.push_back(std::move(o));
  }
  return d;
}

/// dcrouter's default_llm.json ({model: {"input_price", "output_price"}},
/// USD per million tokens) as a price table.
inline price_table read_dcrouter_prices(const std::filesystem::path& path) {
  const auto document = detail::parse_outcomes_json(path);
  price_table prices;
  const auto* models = document.if_object();
  if (!models) throw error(errc::corrupt_file, "'" + path.string() + "' is not a JSON object of models");
  for (const auto& [model, entry] : *models) {
    const auto* fields = entry.if_object();
    const auto* input = fields ? fields->if_contains("input_price") : nullptr;
    const auto* output = fields ? fields->if_contains("output_price") : nullptr;
    if (!input || !output || !input->is_number() || !output->is_number())
      throw error(errc::corrupt_file, "'" + path.string() + "': \"" + std::string(model) +
                                          "\" needs numbers input_price and output_price");
    model_price price;
    price.input = price.cached_input = price.cache_write = input->to_number<double>();
    price.output = output->to_number<double>();
    prices.set(std::string(model), price);
  }
  return prices;
}

/// A dcrouter JSON file, each question priced at `prices` (file comment).
inline routing_dataset read_dcrouter(const std::filesystem::path& path, const price_table& prices) {
  const auto document = detail::parse_outcomes_json(path);
  const auto refuse = [&](const std::string& what) { throw error(errc::corrupt_file, "'" + path.string() + "': " + what); };
  const auto* entries = document.if_array();
  if (!entries || entries->empty()) refuse("expected a non-empty list of {\"question\", \"scores\"}");
  routing_dataset d{routing_dataset_name(path), "dcrouter", {}, {}};
  std::vector<model_price> price;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const auto* entry = (*entries)[i].if_object();
    const auto* question = entry ? entry->if_contains("question") : nullptr;
    const auto* scores = entry ? entry->if_contains("scores") : nullptr;
    if (!question || !question->is_string() || !scores || !scores->is_object())
      refuse("entry " + std::to_string(i) + " needs a \"question\" string and a \"scores\" object");
    if (i == 0)
      for (const auto& [model, score] : scores->get_object()) {
        const auto* listed = prices.find(model);
        if (!listed) refuse("no price for '" + std::string(model) + "'");
        d.models.emplace_back(model);
        price.push_back(*listed);
      }
    routing_outcome o{std::string(question->get_string()), {}, {}, {}, {}};
    const double input_tokens = static_cast<double>(o.text.size()) / 4.0;
    for (std::size_t m = 0; m < d.models.size(); ++m) {
      const auto* score = scores->get_object().if_contains(d.models[m]);
      if (!score || !score->is_number())
        refuse("entry " + std::to_string(i) + " has no score for '" + d.models[m] + "'");
      o.score.push_back(score->to_number<float>());
      o.cost.push_back((input_tokens * price[m].input + dcrouter_answer_tokens * price[m].output) / 1e6);
    }
    d.outcomes.push_back(std::move(o));
  }
  return d;
}

/// `d` with its models in the order of `models` (its outcomes' scores,
/// costs and answers reordered alike), so that files of one format whose
/// columns or keys come in another order are read as one. Throws
/// llmgate::error(errc::corrupt_file) when `d` lacks one of `models`.
inline void order_models_as(routing_dataset& d, const std::vector<std::string>& models) {
  std::vector<std::size_t> from;
  for (const auto& model : models) {
    const auto at = std::find(d.models.begin(), d.models.end(), model);
    if (at == d.models.end())
      throw error(errc::corrupt_file, "'" + d.name + "' has no outcomes of '" + model + "', which the learning data has");
    from.push_back(static_cast<std::size_t>(at - d.models.begin()));
  }
  const auto reordered = [&](const auto& values) {
    std::remove_cvref_t<decltype(values)> out;
    for (const auto f : from) out.push_back(values[f]);
    return out;
  };
  for (auto& o : d.outcomes) {
    o.score = reordered(o.score);
    o.cost = reordered(o.cost);
    if (!o.answer.empty()) o.answer = reordered(o.answer);
  }
  d.models = models;
}

/// Every outcomes file under `folder` (recursively), sorted by path: *.csv
/// as RouterBench, *.json other than default_llm.json as dcrouter, priced by
/// the default_llm.json beside it or else `fallback_prices`.
inline std::vector<routing_dataset> read_routing_folder(const std::filesystem::path& folder,
                                                        const std::filesystem::path& fallback_prices) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder))
    if (entry.is_regular_file() && (entry.path().extension() == ".csv" ||
                                    (entry.path().extension() == ".json" && entry.path().filename() != "default_llm.json")))
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<routing_dataset> sets;
  for (const auto& file : files) {
    if (file.extension() == ".csv") {
      sets.push_back(read_routerbench(file));
    } else {
      const auto beside = file.parent_path() / "default_llm.json";
      sets.push_back(read_dcrouter(file, read_dcrouter_prices(std::filesystem::exists(beside) ? beside : fallback_prices)));
    }
  }
  return sets;
}

}  // namespace llmgate::inline v0
