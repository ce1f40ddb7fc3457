// gguf_info: what a GGUF model file (llama.cpp's format, versions 2 and 3)
// says about itself in its header: the architecture, the quantisation by
// llama.cpp's file-type name, the number of weights and the file's size. The
// evaluation kit shows these for the models it serves itself.
//
// The bytes are untrusted: every count, length and offset is checked against
// what the file holds before it is used, nothing is allocated for a length
// the file cannot hold, and a truncated or inconsistent file is refused with
// an llmgate::error naming the offset (errc::truncated_file,
// errc::corrupt_file; errc::wrong_kind_of_file without GGUF's magic;
// errc::unsupported_version; errc::io_failure when it cannot be read).
// Only the header is read; the tensors' data are checked to lie inside the file.
//
// Layout (little-endian): "GGUF" | version u32 | tensor count u64 |
// metadata count u64 | metadata (key string, value type u32, value)... |
// tensor infos (name string, n_dims u32, dims u64..., ggml type u32,
// offset u64)... | padding to general.alignment (32) | tensor data.
// A string is a u64 length and that many bytes.
#pragma once

#include <array>         // std::array
#include <bit>           // std::bit_cast
#include <charconv>      // std::to_chars, std::from_chars
#include <cstddef>       // std::size_t
#include <cstdint>       // std::uint8_t ... std::uint64_t, std::int64_t, INT64_MAX
#include <filesystem>    // std::filesystem::path, file_size
#include <fstream>       // std::ifstream
#include <istream>       // std::istream
#include <map>           // std::map
#include <optional>      // std::optional
#include <string>        // std::string, std::to_string
#include <string_view>   // std::string_view
#include <system_error>  // std::error_code, std::errc
#include <type_traits>   // std::conditional_t
#include <utility>       // std::move
#include <vector>        // std::vector

#include "llmgate/error.hpp"                 // llmgate::error, errc
#include "llmgate/eval/run/run_records.hpp"  // served_model_info

namespace llmgate::inline v0 {

/// What a GGUF file's header says.
struct gguf_info {
  std::uint32_t version = 0;
  std::string architecture;         ///< general.architecture ("llama"); empty when absent
  std::string name;                 ///< general.name; empty when absent
  std::string file_type;            ///< llama.cpp's llama_ftype name without its prefix: F32, F16, Q8_0, Q4_K_M...
  bool file_type_guessed = false;   ///< no general.file_type: guessed from the tensors' types, as llama.cpp does
  std::uint64_t tensors = 0;
  std::uint64_t parameters = 0;     ///< the tensors' elements, summed
  std::uint64_t file_bytes = 0;
  std::uint64_t alignment = 32;     ///< general.alignment
  std::uint64_t data_offset = 0;    ///< where the tensors' data start
  /// Every metadata value as text: numbers as written, strings up to 256
  /// bytes (longer ones cut, "... (N bytes)" after), arrays as
  /// "array of N <type>" (the tokenizer's vocabulary is one).
  std::map<std::string, std::string> metadata;
};

/// llama.cpp's name of a llama_ftype (general.file_type) without its
/// ALL_/MOSTLY_ prefix; empty for a number it never used.
inline std::string_view gguf_file_type_name(std::uint64_t llama_ftype) noexcept {
  static constexpr std::array<std::string_view, 39> names = {
      "F32",     "F16",     "Q4_0",    "Q4_1",    "Q4_1_SOME_F16", "",        "",        "Q8_0",
      "Q5_0",    "Q5_1",    "Q2_K",    "Q3_K_S",  "Q3_K_M",        "Q3_K_L",  "Q4_K_S",  "Q4_K_M",
      "Q5_K_S",  "Q5_K_M",  "Q6_K",    "IQ2_XXS", "IQ2_XS",        "Q2_K_S",  "IQ3_XS",  "IQ3_XXS",
      "IQ1_S",   "IQ4_NL",  "IQ3_S",   "IQ3_M",   "IQ2_S",         "IQ2_M",   "IQ4_XS",  "IQ1_M",
      "BF16",    "Q4_0_4_4", "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",      "TQ2_0",   "MXFP4_MOE"};
  return llama_ftype < names.size() ? names[llama_ftype] : std::string_view();
}

namespace gguf_detail {

/// A ggml tensor type's storage: elements per block and bytes per block
/// (gguf-py's GGML_QUANT_SIZES); 0 for a type this build does not know,
/// whose data extent is then left unchecked.
struct ggml_type_size {
  std::uint32_t block = 0;
  std::uint32_t bytes = 0;
};

inline ggml_type_size ggml_size(std::uint32_t type) noexcept {
  // By ggml_type number; {0, 0} where ggml removed a type.
  static constexpr std::array<ggml_type_size, 40> sizes = {{
      {1, 4},     {1, 2},     {32, 18},   {32, 20},   // 0-3: F32 F16 Q4_0 Q4_1
      {0, 0},     {0, 0},     {32, 22},   {32, 24},   // 4-7: - - Q5_0 Q5_1
      {32, 34},   {32, 36},   {256, 84},  {256, 110}, // 8-11: Q8_0 Q8_1 Q2_K Q3_K
      {256, 144}, {256, 176}, {256, 210}, {256, 292}, // 12-15: Q4_K Q5_K Q6_K Q8_K
      {256, 66},  {256, 74},  {256, 98},  {256, 50},  // 16-19: IQ2_XXS IQ2_XS IQ3_XXS IQ1_S
      {32, 18},   {256, 110}, {256, 82},  {256, 136}, // 20-23: IQ4_NL IQ3_S IQ2_S IQ4_XS
      {1, 1},     {1, 2},     {1, 4},     {1, 8},     // 24-27: I8 I16 I32 I64
      {1, 8},     {256, 56},  {1, 2},     {0, 0},     // 28-31: F64 IQ1_M BF16 -
      {0, 0},     {0, 0},     {256, 54},  {256, 66},  // 32-35: - - TQ1_0 TQ2_0
      {0, 0},     {0, 0},     {0, 0},     {32, 17},   // 36-39: - - - MXFP4
  }};
  return type < sizes.size() ? sizes[type] : ggml_type_size{};
}

/// The llama_ftype llama.cpp guesses from the most common tensor type when
/// general.file_type is absent (llama_model_loader); F32 where it has none.
inline std::uint64_t guessed_file_type(std::uint32_t ggml_type) noexcept {
  switch (ggml_type) {
    case 1: return 1;    // F16
    case 30: return 32;  // BF16
    case 2: return 2;    // Q4_0
    case 3: return 3;    // Q4_1
    case 6: return 8;    // Q5_0
    case 7: return 9;    // Q5_1
    case 8: return 7;    // Q8_0
    case 10: return 10;  // Q2_K
    case 11: return 12;  // Q3_K -> Q3_K_M
    case 12: return 15;  // Q4_K -> Q4_K_M
    case 13: return 17;  // Q5_K -> Q5_K_M
    case 14: return 18;  // Q6_K
    case 34: return 36;  // TQ1_0
    case 35: return 37;  // TQ2_0
    case 16: return 19;  // IQ2_XXS
    case 17: return 20;  // IQ2_XS
    case 22: return 28;  // IQ2_S
    case 18: return 23;  // IQ3_XXS
    case 19: return 24;  // IQ1_S
    case 29: return 31;  // IQ1_M
    case 20: return 25;  // IQ4_NL
    case 23: return 30;  // IQ4_XS
    case 21: return 26;  // IQ3_S
    case 39: return 38;  // MXFP4 -> MXFP4_MOE
    default: return 0;   // F32
  }
}

/// GGUF's metadata value types.
enum value_type : std::uint32_t {
  u8 = 0, i8, u16, i16, u32, i32, f32, boolean, string, array, u64, i64, f64, value_type_count
};

inline std::string_view type_name(std::uint32_t type) noexcept {
  static constexpr std::array<std::string_view, value_type_count> names = {
      "uint8", "int8", "uint16", "int16", "uint32", "int32", "float32",
      "bool", "string", "array", "uint64", "int64", "float64"};
  return type < names.size() ? names[type] : std::string_view("unknown");
}

inline std::size_t scalar_bytes(std::uint32_t type) noexcept {
  switch (type) {
    case u8: case i8: case boolean: return 1;
    case u16: case i16: return 2;
    case u32: case i32: case f32: return 4;
    case u64: case i64: case f64: return 8;
    default: return 0;
  }
}

inline constexpr std::size_t kept_string_bytes = 256;
inline constexpr std::uint64_t max_key_bytes = 65535;  // GGUF's limit on a key
inline constexpr std::uint32_t max_dims = 4;           // GGML_MAX_DIMS
inline constexpr int max_array_depth = 4;              // arrays of arrays...: llama.cpp writes none

template <class Number>
std::string shortest(Number value) {
  char text[40];
  return {text, std::to_chars(text, text + sizeof text, value).ptr};
}

/// Reads a GGUF header from a stream of known size, checking every read.
class header_reader {
 public:
  header_reader(std::istream& in, std::uint64_t size, std::string_view name) : in_(in), size_(size), name_(name) {
    if (size_ > static_cast<std::uint64_t>(INT64_MAX))
      throw error(errc::io_failure, "GGUF file " + name_ + ": size " + std::to_string(size_) + " is not a file's");
  }

  std::uint64_t offset() const noexcept { return offset_; }
  std::uint64_t size() const noexcept { return size_; }

  [[noreturn]] void truncated(std::uint64_t at, std::uint64_t bytes, std::string_view what) const {
    throw error(errc::truncated_file, "GGUF file " + name_ + ": ends at byte " + std::to_string(size_) + ", before the " +
                                          std::string(what) + " at offset " + std::to_string(at) + " (" +
                                          std::to_string(bytes) + " bytes)");
  }
  [[noreturn]] void corrupt(std::uint64_t at, std::string_view why) const {
    throw error(errc::corrupt_file, "GGUF file " + name_ + ": " + std::string(why) + " at offset " + std::to_string(at));
  }

  void need(std::uint64_t bytes, std::string_view what) const {
    if (bytes > size_ - offset_) truncated(offset_, bytes, what);
  }

  void read(void* into, std::size_t bytes, std::string_view what) {
    need(bytes, what);
    if (!in_.read(static_cast<char*>(into), static_cast<std::streamsize>(bytes)))
      throw error(errc::io_failure, "GGUF file " + name_ + ": read failed at offset " + std::to_string(offset_));
    offset_ += bytes;
  }

  void skip(std::uint64_t bytes, std::string_view what) {
    need(bytes, what);
    in_.seekg(static_cast<std::streamoff>(bytes), std::ios::cur);
    if (!in_) throw error(errc::io_failure, "GGUF file " + name_ + ": seek failed at offset " + std::to_string(offset_));
    offset_ += bytes;
  }

  template <class Number>
  Number number(std::string_view what) {
    unsigned char bytes[sizeof(Number)];
    read(bytes, sizeof bytes, what);
    using bits_type = std::conditional_t<sizeof(Number) == 8, std::uint64_t,
                      std::conditional_t<sizeof(Number) == 4, std::uint32_t,
                      std::conditional_t<sizeof(Number) == 2, std::uint16_t, std::uint8_t>>>;
    bits_type bits = 0;
    for (std::size_t i = sizeof bytes; i-- > 0;) bits = static_cast<bits_type>((bits << 8) | bytes[i]);
    return std::bit_cast<Number>(bits);
  }

  /// A string's length, checked against the bytes left.
  std::uint64_t string_length(std::string_view what) {
    const std::uint64_t at = offset_;
    const auto length = number<std::uint64_t>(what);
    if (length > size_ - offset_) truncated(at, 8 + length, what);
    return length;
  }

  /// A string longer than `longest` is refused.
  std::string bounded_text(std::string_view what, std::uint64_t longest) {
    const std::uint64_t at = offset_;
    const std::uint64_t length = string_length(what);
    if (length > longest) corrupt(at, std::string(what) + " is longer than " + std::to_string(longest) + " bytes");
    std::string out(static_cast<std::size_t>(length), '\0');
    read(out.data(), out.size(), what);
    return out;
  }

  /// A string, of which at most `keep` bytes are kept.
  std::string text(std::string_view what, std::uint64_t keep = UINT64_MAX) {
    const std::uint64_t length = string_length(what);
    std::string out(static_cast<std::size_t>(length < keep ? length : keep), '\0');
    read(out.data(), out.size(), what);
    if (length > out.size()) skip(length - out.size(), what);
    return out;
  }

 private:
  std::istream& in_;
  std::uint64_t size_;
  std::string name_;
  std::uint64_t offset_ = 0;
};

/// A scalar of `type` as text; empty for a type that is not a scalar.
inline std::string scalar_text(header_reader& reader, std::uint32_t type, std::string_view what) {
  switch (type) {
    case u8: return std::to_string(reader.number<std::uint8_t>(what));
    case i8: return std::to_string(reader.number<std::int8_t>(what));
    case u16: return std::to_string(reader.number<std::uint16_t>(what));
    case i16: return std::to_string(reader.number<std::int16_t>(what));
    case u32: return std::to_string(reader.number<std::uint32_t>(what));
    case i32: return std::to_string(reader.number<std::int32_t>(what));
    case u64: return std::to_string(reader.number<std::uint64_t>(what));
    case i64: return std::to_string(reader.number<std::int64_t>(what));
    case f32: return shortest(reader.number<float>(what));
    case f64: return shortest(reader.number<double>(what));
    case boolean: return reader.number<std::uint8_t>(what) != 0 ? "true" : "false";
    default: return {};
  }
}

/// Reads one value of `type` and returns it as text (gguf_info::metadata's form).
inline std::string value_text(header_reader& reader, std::uint32_t type, std::string_view what, int depth = 0) {
  const std::uint64_t at = reader.offset();
  if (type == string) {
    const std::uint64_t start = reader.offset();
    std::string text = reader.text(what, kept_string_bytes);
    const std::uint64_t length = reader.offset() - start - 8;
    if (length > text.size()) text += "... (" + std::to_string(length) + " bytes)";
    return text;
  }
  if (type == array) {
    if (depth >= max_array_depth) reader.corrupt(at, std::string(what) + ": arrays nested too deep");
    const auto element = reader.number<std::uint32_t>(what);
    if (element >= value_type_count)
      reader.corrupt(at, std::string(what) + ": unknown array element type " + std::to_string(element));
    const std::uint64_t count_at = reader.offset();
    const auto count = reader.number<std::uint64_t>(what);
    // Each element takes at least its scalar size, or a string's or array's
    // own length field: a count the file cannot hold is refused up front.
    const std::uint64_t least = element == string ? 8 : element == array ? 12 : scalar_bytes(element);
    if (count > (reader.size() - reader.offset()) / least)
      reader.truncated(count_at, count > UINT64_MAX / least ? UINT64_MAX : count * least,
                       std::string(what) + "'s " + std::to_string(count) + " elements");
    if (element == string) {
      for (std::uint64_t i = 0; i < count; ++i) reader.skip(reader.string_length(what), what);
    } else if (element == array) {
      for (std::uint64_t i = 0; i < count; ++i) value_text(reader, array, what, depth + 1);
    } else {
      reader.skip(count * least, what);
    }
    return "array of " + std::to_string(count) + " " + std::string(type_name(element));
  }
  if (type >= value_type_count) reader.corrupt(at, std::string(what) + ": unknown value type " + std::to_string(type));
  return scalar_text(reader, type, what);
}

/// A metadata value that must be a non-negative integer (general.alignment, general.file_type).
inline std::optional<std::uint64_t> unsigned_value(std::uint32_t type, const std::string& text) {
  if (type != u8 && type != u16 && type != u32 && type != u64 && type != i8 && type != i16 && type != i32 && type != i64)
    return std::nullopt;
  if (text.empty() || text[0] == '-') return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, failed] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (failed != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace gguf_detail

/// Reads the header of the GGUF file `in`, positioned at the file's first
/// byte, of `size` bytes (`name` names it in errors). Throws llmgate::error as the file's
/// comment says.
inline gguf_info read_gguf_info(std::istream& in, std::uint64_t size, std::string_view name) {
  using namespace gguf_detail;
  header_reader reader(in, size, name);
  gguf_info info;
  info.file_bytes = size;

  char magic[4];
  reader.read(magic, 4, "magic");
  if (std::string_view(magic, 4) != "GGUF")
    throw error(errc::wrong_kind_of_file, "GGUF file " + std::string(name) + ": no GGUF magic at offset 0");
  info.version = reader.number<std::uint32_t>("version");
  if (info.version != 2 && info.version != 3)
    throw error(errc::unsupported_version, "GGUF file " + std::string(name) + ": version " +
                                               std::to_string(info.version) +
                                               " at offset 4 (this build reads 2 and 3)");
  info.tensors = reader.number<std::uint64_t>("tensor count");
  const auto kv_count = reader.number<std::uint64_t>("metadata count");

  std::optional<std::uint64_t> file_type;
  for (std::uint64_t i = 0; i < kv_count; ++i) {
    const std::uint64_t key_at = reader.offset();
    std::string key = reader.bounded_text("metadata key " + std::to_string(i), max_key_bytes);
    const std::uint64_t type_at = reader.offset();
    const auto type = reader.number<std::uint32_t>(key);
    if (type >= value_type_count) reader.corrupt(type_at, key + ": unknown value type " + std::to_string(type));
    std::string text = value_text(reader, type, key);
    if (key == "general.architecture" && type == string) info.architecture = text;
    if (key == "general.name" && type == string) info.name = text;
    if (key == "general.alignment") {
      const auto alignment = unsigned_value(type, text);
      if (!alignment || *alignment == 0 || (*alignment & (*alignment - 1)) != 0 || *alignment > (1u << 30))
        reader.corrupt(type_at, "general.alignment " + text + " is not a power of two");
      info.alignment = *alignment;
    }
    if (key == "general.file_type") {
      file_type = unsigned_value(type, text);
      if (!file_type) reader.corrupt(type_at, "general.file_type " + text + " is not a file type number");
    }
    if (!info.metadata.emplace(std::move(key), std::move(text)).second) reader.corrupt(key_at, "metadata key repeated");
  }

  // Tensor infos: elements and, where the type is known, the data's extent.
  struct extent { std::uint64_t tensor, offset, bytes; };
  std::vector<extent> extents;
  std::map<std::string, std::uint32_t> names;  // tensor -> ggml type
  for (std::uint64_t t = 0; t < info.tensors; ++t) {
    const std::uint64_t at = reader.offset();
    const std::string what = "tensor " + std::to_string(t);
    std::string tensor_name = reader.bounded_text(what + "'s name", max_key_bytes);
    if (names.contains(tensor_name)) reader.corrupt(at, what + "'s name \"" + tensor_name + "\" repeated");
    const std::uint64_t dims_at = reader.offset();
    const auto dims = reader.number<std::uint32_t>(what + "'s dimension count");
    if (dims == 0 || dims > max_dims)
      reader.corrupt(dims_at, what + " has " + std::to_string(dims) + " dimensions (1 to 4)");
    std::uint64_t elements = 1;
    std::uint64_t first = 0;
    for (std::uint32_t d = 0; d < dims; ++d) {
      const std::uint64_t dim_at = reader.offset();
      const auto n = reader.number<std::uint64_t>(what + "'s dimensions");
      if (d == 0) first = n;
      if (n > static_cast<std::uint64_t>(INT64_MAX) || (n != 0 && elements > static_cast<std::uint64_t>(INT64_MAX) / n))
        reader.corrupt(dim_at, what + "'s element count overflows");
      elements *= n;
    }
    const std::uint64_t type_at = reader.offset();
    const auto type = reader.number<std::uint32_t>(what + "'s type");
    const std::uint64_t offset_at = reader.offset();
    const auto offset = reader.number<std::uint64_t>(what + "'s data offset");
    if (offset % info.alignment != 0) reader.corrupt(offset_at, what + "'s data offset is not aligned");
    if (info.parameters > UINT64_MAX - elements) reader.corrupt(at, "parameter count overflows");
    info.parameters += elements;
    if (const auto storage = ggml_size(type); storage.block != 0) {
      if (first % storage.block != 0)
        reader.corrupt(type_at, what + "'s first dimension is not a whole number of blocks");
      extents.push_back({t, offset, elements / storage.block * storage.bytes});
    } else {
      extents.push_back({t, offset, 0});
    }
    names.emplace(std::move(tensor_name), type);
  }

  const std::uint64_t header_end = reader.offset();
  info.data_offset = header_end + (info.alignment - header_end % info.alignment) % info.alignment;
  if (info.tensors > 0) {
    if (info.data_offset > size)
      reader.truncated(header_end, info.data_offset - header_end, "padding before the tensor data");
    const std::uint64_t data_bytes = size - info.data_offset;
    for (const extent& e : extents)
      if (e.offset > data_bytes || e.bytes > data_bytes - e.offset)
        reader.truncated(info.data_offset + e.offset, e.bytes, "data of tensor " + std::to_string(e.tensor));
  }

  if (file_type) {
    info.file_type = gguf_file_type_name(*file_type);
    if (info.file_type.empty()) info.file_type = "file type " + std::to_string(*file_type);
  } else {
    // llama.cpp takes the type of the most tensors, counted in name order
    // (the first to reach the highest count wins a tie).
    std::map<std::uint32_t, std::uint64_t> tensors_by_type;
    std::uint64_t most = 0;
    std::uint32_t most_common_type = 0;
    for (const auto& [tensor, type] : names)
      if (++tensors_by_type[type] > most) most = tensors_by_type[type], most_common_type = type;
    info.file_type = gguf_file_type_name(guessed_file_type(most_common_type));
    info.file_type_guessed = true;
  }
  return info;
}

/// Reads the header of the GGUF file at `path`.
inline gguf_info read_gguf_info(const std::filesystem::path& path) {
  std::error_code failed;
  const std::uint64_t size = std::filesystem::file_size(path, failed);
  if (failed) throw error(errc::io_failure, "GGUF file " + path.string() + ": " + failed.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) throw error(errc::io_failure, "GGUF file " + path.string() + ": cannot be opened");
  return read_gguf_info(in, size, path.string());
}

/// What the kit records of a model it serves from the GGUF file at `path`:
/// its size, quantisation and parameters (the engine and its memory in use
/// are the caller's to fill). Throws as read_gguf_info does.
inline served_model_info served_model_from_gguf(std::string candidate, const std::filesystem::path& path) {
  const gguf_info info = read_gguf_info(path);
  return {.candidate = std::move(candidate), .path = path.string(), .file_bytes = info.file_bytes,
          .quantization = info.file_type, .parameters = info.parameters, .rss_bytes = 0, .engine = {}};
}

}  // namespace llmgate::inline v0
