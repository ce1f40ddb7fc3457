// libFuzzer target: what the evaluation kit reads from outside, on any
// bytes. The first byte picks the reader: a GGUF file's header (the model
// files it serves), a judge's verdict of each kind (a model's free text),
// a CSV file of ratings (filled in by hand, in a spreadsheet), or an
// evaluation file. Each may refuse with llmgate::error; nothing may
// crash, hang or leak, and a verdict parsed must lie in [0, 1].
#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <sstream>      // std::istringstream
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include <boost/json/parse.hpp>  // boost::json::parse

#include "llmgate/eval/plan/evaluation_file.hpp"  // evaluation_file
#include "llmgate/eval/plan/gguf_info.hpp"        // read_gguf_info
#include "llmgate/eval/score/judge_verdict.hpp"   // parse_judge_verdict
#include "llmgate/detail/csv_records.hpp"         // detail::parse_csv (the rating import's CSV reader)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 4) {
      case 0: {
        std::istringstream in{std::string(bytes)};
        (void)llmgate::read_gguf_info(in, bytes.size(), "fuzz.gguf");
        break;
      }
      case 1: {
        const std::vector<std::string> labels = {"A", "B", "C"};
        for (const auto kind : {llmgate::judge_kind::scorer, llmgate::judge_kind::comparer,
                                llmgate::judge_kind::comparer_reasoning, llmgate::judge_kind::choice})
          if (const auto verdict = llmgate::parse_judge_verdict(kind, bytes, labels);
              verdict && !(verdict->value >= 0 && verdict->value <= 1))
            __builtin_trap();
        break;
      }
      case 2: {
        std::vector<llmgate::detail::csv_error> errors;
        (void)llmgate::detail::parse_csv(bytes, errors);
        break;
      }
      case 3: {
        boost::system::error_code ec;
        const auto value = boost::json::parse(bytes, ec);
        if (!ec) (void)llmgate::evaluation_file::from_json(value, "/nonexistent-llmgate-fuzz");
        break;
      }
    }
  } catch (const llmgate::error&) {
  }
  return 0;
}
