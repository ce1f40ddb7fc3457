// csv_records: a CSV file's records (RFC 4180: fields separated by commas,
// a quoted field may hold commas, doubled quotes and line ends; CRLF or LF
// line ends), each with the line it starts on, and what is wrong with the
// lines that are not CSV. Read by the rating import (eval/rate/rating_csv.hpp)
// and the routing outcomes reader (tools/routing_outcomes.hpp).
#pragma once

#include <cstddef>      // std::size_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <utility>      // std::move
#include <vector>       // std::vector

#include "llmgate/version.hpp"  // the inline versioned namespace

namespace llmgate::inline v0::detail {

/// One record of a CSV file and the line it starts on (1-based).
struct csv_record {
  std::size_t line = 0;
  std::vector<std::string> fields;
};

/// What is wrong on a line.
struct csv_error {
  std::size_t line = 0;
  std::string what;
};

/// Splits `text` into records (RFC 4180, CRLF or LF line ends). Appends
/// what is wrong to `errors`; records the parse could not finish are left out.
inline std::vector<csv_record> parse_csv(std::string_view text, std::vector<csv_error>& errors) {
  std::vector<csv_record> records;
  std::size_t line = 1;
  std::size_t i = 0;
  const auto at_line_end = [&](std::size_t at) {
    return at < text.size() && (text[at] == '\n' || (text[at] == '\r' && at + 1 < text.size() && text[at + 1] == '\n'));
  };
  const auto skip_line_end = [&] {
    i += text[i] == '\r' ? 2 : 1;
    ++line;
  };
  while (i < text.size()) {
    csv_record record{.line = line, .fields = {}};
    bool broken = false;
    for (;;) {  // one field each turn
      std::string field;
      if (i < text.size() && text[i] == '"') {
        const std::size_t opened = line;
        ++i;
        bool closed = false;
        while (i < text.size()) {
          if (text[i] == '"') {
            if (i + 1 < text.size() && text[i + 1] == '"') {
              field += '"';
              i += 2;
              continue;
            }
            ++i;
            closed = true;
            break;
          }
          if (text[i] == '\n') ++line;
          field += text[i++];
        }
        if (!closed) {
          errors.push_back({opened, "a quoted field is not closed"});
          return records;
        }
        if (i < text.size() && text[i] != ',' && !at_line_end(i)) {
          errors.push_back({line, "characters after a quoted field's closing quote"});
          broken = true;
        }
      }
      while (i < text.size() && text[i] != ',' && !at_line_end(i)) {
        if (text[i] == '"' && !broken) {
          errors.push_back({line, "a quote inside a field that does not start with one"});
          broken = true;
        }
        field += text[i++];
      }
      record.fields.push_back(std::move(field));
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < text.size()) skip_line_end();
      break;
    }
    const bool blank = record.fields.size() == 1 && record.fields.front().empty();
    if (!broken && !blank) records.push_back(std::move(record));
  }
  return records;
}

}  // namespace llmgate::inline v0::detail
