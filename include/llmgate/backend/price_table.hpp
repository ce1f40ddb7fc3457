// price_table: what each model charges per million tokens, loaded from
// JSON, and the exact cost of a response from the usage it reports.
//
//   { "gpt-4o-mini":       { "input": 0.15, "cached_input": 0.075, "output": 0.60 },
//     "claude-3-5-sonnet": { "input": 3.0, "cached_input": 0.30, "cache_write": 3.75,
//                            "output": 15.0 } }
//
// Prices are US dollars per 1,000,000 tokens. cached_input and cache_write
// default to the input price where a provider does not discount them.
// Cached tokens are priced as cached: cost = (prompt - cached - written) x
// input + cached x cached_input + written x cache_write + completion x output.
//
// Lookup: the model's exact name, else the longest name in the table that
// the model's name starts with followed by '-', ':' or '@', so a dated
// "gpt-4o-mini-2024-07-18" is priced as "gpt-4o-mini", never as "gpt-4o".
#pragma once

#include <cstddef>      // std::size_t
#include <filesystem>   // std::filesystem::path
#include <fstream>      // std::ifstream
#include <iterator>     // std::istreambuf_iterator
#include <map>          // std::map
#include <string>       // std::string
#include <string_view>  // std::string_view

#include <boost/json/parse.hpp>  // boost::json::parse
#include <boost/json/value.hpp>  // boost::json::value

#include "llmgate/chat/chat.hpp"  // token_usage
#include "llmgate/error.hpp"

namespace llmgate::inline v0 {

struct model_price {
  double input = 0;         ///< USD per 1M uncached prompt tokens
  double cached_input = 0;  ///< USD per 1M prompt tokens read from the provider's cache
  double cache_write = 0;   ///< USD per 1M prompt tokens written to the provider's cache
  double output = 0;        ///< USD per 1M completion tokens
};

class price_table {
 public:
  /// Reads the JSON form above. Throws llmgate::error(errc::invalid_request)
  /// naming the model and field when a price is missing, negative or not a number.
  static price_table from_json(const boost::json::value& value) {
    const auto* models = value.if_object();
    if (!models) throw error(errc::invalid_request, "price table must be a JSON object");
    price_table table;
    for (const auto& [model, entry] : *models) {
      const std::string where = "price of " + std::string(model);
      const auto* fields = entry.if_object();
      if (!fields) throw error(errc::invalid_request, where + " must be an object");
      model_price price;
      price.input = read_price(*fields, "input", where, nullptr);
      price.output = read_price(*fields, "output", where, nullptr);
      price.cached_input = read_price(*fields, "cached_input", where, &price.input);
      price.cache_write = read_price(*fields, "cache_write", where, &price.input);
      table.set(std::string(model), price);
    }
    return table;
  }

  /// Reads a JSON file of the form above. Throws llmgate::error
  /// (errc::io_failure) when it cannot be read, invalid_request when it is
  /// not a valid table.
  static price_table load_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw error(errc::io_failure, "cannot read price table " + path.string());
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    boost::system::error_code code;
    const auto value = boost::json::parse(text, code);
    if (code) throw error(errc::invalid_request, "price table " + path.string() + " is not JSON: " + code.message());
    return from_json(value);
  }

  void set(std::string model, model_price price) { prices_[std::move(model)] = price; }

  /// The price of `model` (see Lookup above), or nullptr where unknown.
  const model_price* find(std::string_view model) const {
    if (const auto exact = prices_.find(model); exact != prices_.end()) return &exact->second;
    // Each shorter name the model's could be a dated form of, longest first:
    // a few lookups, however many prices the table holds.
    for (std::size_t end = model.find_last_of("-:@"); end != std::string_view::npos && end > 0;
         end = model.find_last_of("-:@", end - 1))
      if (const auto found = prices_.find(model.substr(0, end)); found != prices_.end()) return &found->second;
    return nullptr;
  }

  /// The cost in USD of `usage` at `model`'s price; 0 where the model is unknown.
  double cost(std::string_view model, const token_usage& usage) const {
    const model_price* price = find(model);
    return price ? cost(*price, usage) : 0.0;
  }

  static double cost(const model_price& price, const token_usage& usage) {
    const std::uint64_t discounted = usage.cached_prompt_tokens + usage.cache_write_tokens;
    const std::uint64_t plain = usage.prompt_tokens > discounted ? usage.prompt_tokens - discounted : 0;
    return (static_cast<double>(plain) * price.input +
            static_cast<double>(usage.cached_prompt_tokens) * price.cached_input +
            static_cast<double>(usage.cache_write_tokens) * price.cache_write +
            static_cast<double>(usage.completion_tokens) * price.output) / 1e6;
  }

 private:
  // `fallback` null: the field is required.
  static double read_price(const boost::json::object& fields, std::string_view key,
                           const std::string& where, const double* fallback) {
    const auto* value = fields.if_contains(key);
    if (!value && fallback) return *fallback;
    if (!value || !value->is_number() || value->to_number<double>() < 0)
      throw error(errc::invalid_request, where + ": \"" + std::string(key) +
                                             "\" must be a non-negative number");
    return value->to_number<double>();
  }

  std::map<std::string, model_price, std::less<>> prices_;
};

}  // namespace llmgate::inline v0
