// pml_reader: reads the XML subset PML is written in into a plain element
// tree with the line and column of every element, attribute and text.
//
// Why a reader of our own rather than an XML library: PML needs the exact
// position of every node for its error messages, and it must refuse
// malformed markup outright (the reference implementation's lxml parser
// runs with recover=True and silently repairs it); the subset is small.
//
// The subset: one root element; elements and attributes named
// [A-Za-z_][A-Za-z0-9_.-]* (the names PML gives modules, so that every
// module name is a valid tag); attribute values in ' or "; the five
// entities &lt; &gt; &amp; &quot; &apos; and numeric references &#N; and
// &#xH;; comments (never containing "--"); CDATA sections, read as text;
// an optional <?xml ...?> declaration at the very start and a UTF-8 byte
// order mark before it. Refused, with the line and column: anything else
// (DOCTYPE, processing instructions, a stray '<' or '&', an unknown
// entity, an unclosed or mismatched tag, a duplicate attribute, text
// outside the root, control characters, nesting deeper than 100).
//
// Line breaks: "\r\n" and a lone "\r" read as "\n" (XML's rule). Unlike
// XML, attribute values keep their line breaks and tabs as written (an
// argument may be several lines of code). Text keeps every character;
// comments vanish, so the text on either side of one is one text.
#pragma once

#include <cstddef>      // std::size_t
#include <cstdint>      // std::uint32_t
#include <string>       // std::string
#include <string_view>  // std::string_view
#include <unordered_set>  // std::unordered_set
#include <utility>      // std::move
#include <variant>      // std::variant
#include <vector>       // std::vector

#include "llmgate/prompt/pml_error.hpp"  // pml_error, source_position
#include "llmgate/version.hpp"           // the inline versioned namespace

namespace llmgate::inline v0::detail {

struct xml_attribute {
  std::string name;
  std::string value;
  source_position at;  ///< where its name starts
};

struct xml_text {
  std::string text;     ///< entities decoded, line breaks read as "\n"
  source_position at;   ///< its first character other than white space (its start when it has none)
};

struct xml_node;

struct xml_element {
  std::string name;
  std::vector<xml_attribute> attributes;
  std::vector<xml_node> children;
  source_position at;  ///< where its '<' is

  const xml_attribute* attribute(std::string_view attribute_name) const noexcept {
    for (const auto& a : attributes)
      if (a.name == attribute_name) return &a;
    return nullptr;
  }
};

struct xml_node {
  std::variant<xml_text, xml_element> value;
};

inline constexpr std::size_t pml_max_depth = 100;

inline bool pml_is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
inline bool pml_is_name_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool pml_is_name_char(char c) noexcept {
  return pml_is_name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}
/// Whether `name` is a PML name: a letter or '_' first, then letters, digits, '_', '-' and '.'.
inline bool pml_is_name(std::string_view name) noexcept {
  if (name.empty() || !pml_is_name_start(name[0])) return false;
  for (char c : name)
    if (!pml_is_name_char(c)) return false;
  return true;
}

inline void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class pml_reader {
 public:
  explicit pml_reader(std::string_view document) : in_(document) {}

  /// The root element. Throws pml_error.
  xml_element read() {
    if (in_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;  // a byte order mark is not a character
    if (starts_with("<?xml") && in_.size() > pos_ + 5 && pml_is_space(in_[pos_ + 5])) {
      const auto end = in_.find("?>", pos_);
      if (end == std::string_view::npos) fail("the <?xml declaration is never closed with ?>");
      advance_to(end + 2);
    }
    std::vector<xml_element> open;  // open[0] is the root
    xml_element root;
    bool root_done = false;
    while (!root_done) {
      if (at_end()) {
        if (open.empty()) fail("the document has no root element");
        fail_at(open.back().at, "<" + open.back().name + "> is never closed");
      }
      const char c = in_[pos_];
      if (c == '<') {
        if (starts_with("<!--")) {
          comment();
        } else if (starts_with("<![CDATA[")) {
          if (open.empty()) fail("text is not allowed outside the root element");
          cdata();
        } else if (starts_with("</")) {
          if (open.empty()) fail("an end tag before any element");
          const auto at = here();
          advance(2);
          const std::string name(read_name("an element name after '</'"));
          skip_space();
          expect('>', "expected '>' to end </" + name);
          if (name != open.back().name)
            fail_at(at, "</" + name + "> does not close <" + open.back().name + "> (opened at line " +
                            std::to_string(open.back().at.line) + ", column " +
                            std::to_string(open.back().at.column) + ")");
          flush_text(open.back());
          xml_element done = std::move(open.back());
          open.pop_back();
          if (open.empty()) {
            root = std::move(done);
            root_done = true;
          } else {
            open.back().children.push_back({std::move(done)});
          }
        } else if (starts_with("<?")) {
          fail("processing instructions (<?...?>) are not supported");
        } else if (starts_with("<!")) {
          fail("declarations (<!DOCTYPE ...>) are not supported");
        } else {
          if (!open.empty()) flush_text(open.back());
          xml_element element;
          const bool closed = start_tag(element);
          if (closed) {
            if (open.empty()) {
              root = std::move(element);
              root_done = true;
            } else {
              open.back().children.push_back({std::move(element)});
            }
          } else {
            if (open.size() == pml_max_depth)
              fail_at(element.at, "elements are nested more than " + std::to_string(pml_max_depth) + " deep");
            open.push_back(std::move(element));
          }
        }
      } else if (open.empty()) {
        if (pml_is_space(c)) {
          advance(1);
        } else {
          fail("text is not allowed outside the root element");
        }
      } else if (c == '&') {
        const auto at = here();
        std::string decoded;
        entity(decoded);
        append_text(decoded, at, false);
      } else {
        text_char();
      }
    }
    // After the root: white space and comments only.
    while (!at_end()) {
      if (pml_is_space(in_[pos_])) advance(1);
      else if (starts_with("<!--")) comment();
      else fail("nothing but comments may follow the root element");
    }
    return root;
  }

 private:
  std::string_view in_;
  std::size_t pos_ = 0;
  std::size_t line_ = 1;
  std::size_t column_ = 1;
  std::string text_;
  source_position text_at_;
  source_position text_content_at_;
  bool text_started_ = false;
  bool text_has_content_ = false;

  bool at_end() const noexcept { return pos_ >= in_.size(); }
  bool starts_with(std::string_view s) const noexcept { return in_.substr(pos_, s.size()) == s; }
  source_position here() const noexcept { return {line_, column_}; }

  [[noreturn]] void fail(const std::string& message) const { throw pml_error(here(), message); }
  [[noreturn]] static void fail_at(source_position at, const std::string& message) { throw pml_error(at, message); }

  // Moves over n bytes, keeping line and column.
  void advance(std::size_t n) {
    for (std::size_t end = pos_ + n; pos_ < end; ++pos_) {
      const auto b = static_cast<unsigned char>(in_[pos_]);
      if (b == '\n') {
        ++line_;
        column_ = 1;
      } else if (b == '\r') {
        if (pos_ + 1 < in_.size() && in_[pos_ + 1] == '\n') continue;  // "\r\n" is one line break
        ++line_;
        column_ = 1;
      } else if ((b & 0xC0) != 0x80) {
        ++column_;  // continuation bytes belong to the character before them
      }
    }
  }
  void advance_to(std::size_t target) { advance(target - pos_); }

  void check_char(char c) const {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 && c != '\t' && c != '\n' && c != '\r') {
      static constexpr char hex[] = "0123456789ABCDEF";
      fail(std::string("control character U+00") + hex[b >> 4] + hex[b & 15] + " is not allowed");
    }
  }

  void skip_space() {
    while (!at_end() && pml_is_space(in_[pos_])) advance(1);
  }

  void expect(char c, const std::string& message) {
    if (at_end() || in_[pos_] != c) fail(message);
    advance(1);
  }

  // The name at the current position, a view of the document; else fails
  // with "expected <what><tag>" (built only then: a tag's name may be long
  // and a tag may hold many attributes).
  std::string_view read_name(std::string_view what, std::string_view tag = {}) {
    if (at_end() || !pml_is_name_start(in_[pos_])) fail("expected " + std::string(what) + std::string(tag));
    const std::size_t begin = pos_;
    while (!at_end() && pml_is_name_char(in_[pos_])) ++pos_;
    const std::size_t length = pos_ - begin;
    pos_ = begin;
    advance(length);
    return in_.substr(begin, length);
  }

  void comment() {
    const auto at = here();
    advance(4);
    const auto end = in_.find("--", pos_);
    if (end == std::string_view::npos) fail_at(at, "the comment is never closed with -->");
    for (std::size_t i = pos_; i < end; ++i) check_char_at(i);
    advance_to(end);
    if (!starts_with("-->")) fail("\"--\" is not allowed inside a comment");
    advance(3);
  }

  void check_char_at(std::size_t i) {
    const auto b = static_cast<unsigned char>(in_[i]);
    if (b < 0x20 && b != '\t' && b != '\n' && b != '\r') {
      advance_to(i);
      check_char(in_[i]);
    }
  }

  void cdata() {
    const auto at = here();
    advance(9);
    const auto end = in_.find("]]>", pos_);
    if (end == std::string_view::npos) fail_at(at, "the CDATA section is never closed with ]]>");
    while (pos_ < end) text_char(end);
    advance(3);
  }

  // One character of text (or of a CDATA section ending at `limit`) into
  // the pending text, with the ordinary characters after it.
  void text_char(std::size_t limit = std::string_view::npos) {
    const char c = in_[pos_];
    check_char(c);
    const auto at = here();
    if (c == '\r') {
      advance(1);
      if (!at_end() && in_[pos_] == '\n') advance(1);
      append_text("\n", at, false);
      return;
    }
    // A run of ordinary bytes at once.
    std::size_t end = pos_ + 1;
    while (end < in_.size() && end < limit && in_[end] != '<' && in_[end] != '&' && in_[end] != '\r' &&
           static_cast<unsigned char>(in_[end]) >= 0x20 && !pml_is_space(in_[end]) && !pml_is_space(c))
      ++end;
    append_text(in_.substr(pos_, end - pos_), at, pml_is_space(c));
    advance_to(end);
  }

  void append_text(std::string_view s, source_position at, bool space) {
    if (!text_started_) {
      text_started_ = true;
      text_at_ = at;
    }
    if (!space && !text_has_content_) {
      bool all_space = true;
      for (char c : s) all_space = all_space && pml_is_space(c);
      if (!all_space) {
        text_has_content_ = true;
        text_content_at_ = at;
      }
    }
    text_ += s;
  }

  void flush_text(xml_element& parent) {
    if (!text_started_) return;
    parent.children.push_back({xml_text{std::move(text_), text_has_content_ ? text_content_at_ : text_at_}});
    text_.clear();
    text_started_ = text_has_content_ = false;
  }

  // After '&': appends the character it stands for.
  void entity(std::string& out) {
    const auto at = here();
    // The longest entity, "&#x10FFFF;" with leading zeros allowed, is bounded
    // at 12 bytes: looking further would make a document of '&'s quadratic.
    const auto window = in_.substr(pos_, 13);
    const auto found = window.find(';');
    const auto end = found == std::string_view::npos ? found : pos_ + found;
    const std::string_view body = end == std::string_view::npos ? std::string_view() : in_.substr(pos_ + 1, end - pos_ - 1);
    if (body.empty()) fail_at(at, "'&' must start an entity such as &amp; (write &amp; for a literal '&')");
    if (body == "lt") out += '<';
    else if (body == "gt") out += '>';
    else if (body == "amp") out += '&';
    else if (body == "quot") out += '"';
    else if (body == "apos") out += '\'';
    else if (body[0] == '#') {
      const bool hex = body.size() > 1 && body[1] == 'x';
      const std::string_view digits = body.substr(hex ? 2 : 1);
      std::uint32_t cp = 0;
      bool ok = !digits.empty();
      for (char d : digits) {
        std::uint32_t v;
        if (d >= '0' && d <= '9') v = static_cast<std::uint32_t>(d - '0');
        else if (hex && d >= 'a' && d <= 'f') v = static_cast<std::uint32_t>(d - 'a' + 10);
        else if (hex && d >= 'A' && d <= 'F') v = static_cast<std::uint32_t>(d - 'A' + 10);
        else {
          ok = false;
          break;
        }
        cp = cp * (hex ? 16 : 10) + v;
        if (cp > 0x10FFFF) {
          ok = false;
          break;
        }
      }
      const bool valid_char = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                              (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
      if (!ok || !valid_char) fail_at(at, "&" + std::string(body) + "; is not a valid character reference");
      append_utf8(out, cp);
    } else {
      fail_at(at, "unknown entity &" + std::string(body) + "; (PML knows &lt; &gt; &amp; &quot; &apos; and &#N;)");
    }
    advance_to(end + 1);
  }

  // At '<' of a start tag: reads it into `element`; true when it closed itself ("/>").
  bool start_tag(xml_element& element) {
    element.at = here();
    advance(1);
    element.name = read_name("an element name after '<' (write &lt; for a literal '<')");
    std::unordered_set<std::string_view> names;  // duplicates found in constant time: a tag may hold 100,000
    for (;;) {
      const std::size_t before = pos_;
      skip_space();
      if (at_end()) fail_at(element.at, "the tag <" + element.name + " is never closed with '>'");
      if (in_[pos_] == '>') {
        advance(1);
        return false;
      }
      if (starts_with("/>")) {
        advance(2);
        return true;
      }
      if (pos_ == before) fail("expected white space, '>' or '/>' in the tag <" + element.name);
      xml_attribute attribute;
      attribute.at = here();
      const std::string_view name = read_name("an attribute name, '>' or '/>' in the tag <", element.name);
      attribute.name = name;
      if (!names.insert(name).second) fail_at(attribute.at, "duplicate attribute " + attribute.name);
      skip_space();
      expect('=', "expected '=' after the attribute name " + attribute.name);
      skip_space();
      if (at_end() || (in_[pos_] != '"' && in_[pos_] != '\''))
        fail("the value of " + attribute.name + " must be in quotes");
      const char quote = in_[pos_];
      const auto value_at = here();
      advance(1);
      for (;;) {
        if (at_end()) fail_at(value_at, "the value of " + attribute.name + " is never closed with " + quote);
        const char c = in_[pos_];
        if (c == quote) {
          advance(1);
          break;
        }
        if (c == '<') fail("'<' is not allowed in an attribute value (write &lt;)");
        if (c == '&') {
          entity(attribute.value);
          continue;
        }
        check_char(c);
        if (c == '\r') {
          advance(1);
          if (!at_end() && in_[pos_] == '\n') advance(1);
          attribute.value += '\n';
          continue;
        }
        attribute.value += c;
        advance(1);
      }
      element.attributes.push_back(std::move(attribute));
    }
  }
};

/// Reads a PML document's root element. Throws pml_error.
inline xml_element read_pml(std::string_view document) { return pml_reader(document).read(); }

}  // namespace llmgate::inline v0::detail
