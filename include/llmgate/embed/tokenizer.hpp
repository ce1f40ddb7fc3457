// tokenize: splits text into case-folded words, numbers, ideographs and
// symbols, in any script. The hashing embedder builds its features from
// these tokens; the guard that vetoes hits on different numbers can use
// them too.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint8_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <vector>       // std::vector

#include "llmgate/embed/unicode.hpp"

namespace llmgate::inline v0 {

enum class token_kind : std::uint8_t {
  word,       ///< a run of letters (and combining marks) of any script
  number,     ///< a run of digits, "3.5" and "1,000" (read "1000") included
  ideograph,  ///< one CJK ideograph or kana: those scripts put no spaces between words
  symbol,     ///< one symbol character: the "+" of "C++", "#", "%", "$", an emoji
};

/// One token: its case-folded UTF-8 text and what it is.
struct token {
  std::string_view text;
  token_kind kind;
};

/// The tokens of one text. Holds their folded text itself, so tokens stay
/// valid until the next tokenize() into the same list; reusing a list
/// reuses its memory.
class token_list {
 public:
  std::size_t size() const noexcept { return entries_.size(); }
  bool empty() const noexcept { return entries_.empty(); }
  token operator[](std::size_t i) const noexcept {
    const auto& e = entries_[i];
    return {std::string_view(folded_).substr(e.offset, e.length), e.kind};
  }

 private:
  friend void tokenize(std::string_view text, token_list& out);

  struct entry {
    std::size_t offset;
    std::size_t length;
    token_kind kind;
  };

  std::string folded_;
  std::vector<entry> entries_;
};

/// Splits `text` into tokens, case-folded (unicode::simple_case_fold).
/// Rules: letters form words, digits form numbers, and a change from one
/// to the other starts a new token ("iphone7" is "iphone" "7", so it
/// matches "iPhone 7"); an apostrophe between letters is dropped inside
/// the word ("don't" is "dont"); "." between digits stays in the number
/// and "," between digits is dropped; each ideograph and each symbol is a
/// token of its own; white space, punctuation and backticks only separate,
/// so a name reads the same quoted or not: `like.this`, "like.this" and
/// like.this are the words "like" "this", as are like_this and Like.This.
inline void tokenize(std::string_view text, token_list& out) {
  using unicode::char_class;
  out.folded_.clear();
  out.entries_.clear();

  bool open = false;  // the last entry is still growing
  const auto close = [&] { open = false; };
  const auto append = [&](char32_t c, token_kind kind) {
    if (!open || out.entries_.back().kind != kind) {
      out.entries_.push_back({out.folded_.size(), 0, kind});
      open = kind == token_kind::word || kind == token_kind::number;
    }
    const std::size_t before = out.folded_.size();
    unicode::append_utf8(out.folded_, c);
    out.entries_.back().length += out.folded_.size() - before;
  };
  const auto class_at = [&](std::size_t position) {
    return position < text.size() ? unicode::classify(unicode::decode_utf8(text, position).code_point)
                                  : char_class::space;
  };

  // A run of ASCII letters or digits, most of English text and code,
  // in one go: what appending its characters one by one would do.
  const auto ascii_run = [&](std::size_t position, char_class wanted) {
    std::size_t end = position;
    while (end < text.size() && static_cast<unsigned char>(text[end]) < 0x80 &&
           unicode::detail::ascii_classes[static_cast<unsigned char>(text[end])] == wanted)
      ++end;
    const token_kind kind = wanted == char_class::letter ? token_kind::word : token_kind::number;
    if (!open || out.entries_.back().kind != kind) {
      out.entries_.push_back({out.folded_.size(), 0, kind});
      open = true;
    }
    for (std::size_t i = position; i < end; ++i)
      out.folded_ += static_cast<char>(unicode::simple_case_fold(static_cast<unsigned char>(text[i])));
    out.entries_.back().length += end - position;
    return end;
  };

  for (std::size_t position = 0; position < text.size();) {
    if (const auto byte = static_cast<unsigned char>(text[position]); byte < 0x80) {
      const auto ascii = unicode::detail::ascii_classes[byte];
      if (ascii == char_class::letter || ascii == char_class::digit) {
        position = ascii_run(position, ascii);
        continue;
      }
    }
    const auto [c, length] = unicode::decode_utf8(text, position);
    position += length;
    const auto growing = open ? out.entries_.back().kind : token_kind::symbol;
    switch (unicode::classify(c)) {
      case char_class::letter:
        if (unicode::is_ideograph(c)) {
          close();
          append(c, token_kind::ideograph);
          close();
        } else {
          append(unicode::simple_case_fold(c), token_kind::word);
        }
        break;
      case char_class::digit:
        append(c, token_kind::number);
        break;
      case char_class::symbol:
        close();
        // A backtick quotes code as quotation marks quote prose (`like.this`,
        // "like.this"): it only separates.
        if (c != U'`') append(c, token_kind::symbol);
        break;
      default: {
        const auto next = class_at(position);
        const bool apostrophe_in_word = (c == U'\'' || c == U'\u2019') && open &&
                                        growing == token_kind::word && next == char_class::letter;
        const bool separator_in_number = (c == U'.' || c == U',') && open &&
                                         growing == token_kind::number && next == char_class::digit;
        if (separator_in_number && c == U'.') append(c, token_kind::number);
        if (!apostrophe_in_word && !separator_in_number) close();
      }
    }
  }
}

}  // namespace llmgate::inline v0
