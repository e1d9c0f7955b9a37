// Parsing JSON someone handed us: bounded in nesting before any tree is built.
//
// Not json::parse with a callback: nlohmann's callback parser scans the whole enclosing
// container for a discarded value after every object ends, so an array of N small objects cost
// N^2 (a 4 MiB report rejected after 228 s). The depth check is a pass over the SAX events
// instead, then json::parse without a callback builds the tree; both are linear.

#include "common/json_input.hpp"

#include <vector>

#include <fmt/format.h>

#include "common/text.hpp"

namespace interprobe {

using json = nlohmann::json;

namespace {

// Follows the parser's events to know the key path of the element being parsed, so a document
// that is too deep or holds an unreadable number is named where it breaks.
class DepthCheck : public nlohmann::json_sax<json> {
 public:
  bool null() override { return element_done(); }
  bool boolean(bool) override { return element_done(); }
  bool number_integer(number_integer_t) override { return element_done(); }
  bool number_unsigned(number_unsigned_t) override { return element_done(); }
  bool number_float(number_float_t, const string_t&) override { return element_done(); }
  bool string(string_t&) override { return element_done(); }
  bool binary(binary_t&) override { return element_done(); }
  bool start_object(std::size_t) override { return open(false); }
  bool start_array(std::size_t) override { return open(true); }
  bool key(string_t& key) override {
    frames_.back().key = key;
    return true;
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
    // 406: a number beyond double range (1e999). Syntax errors are left to json::parse, which
    // stops at the same byte (before this depth) and throws the parse_error callers expect.
    if (ex.id == 406) throw JsonInputError(fmt::format("{}: unreadable value ({})", path_or_top(), ex.what()));
    return false;
  }

 private:
  struct Frame {
    bool array;
    std::size_t next_index;
    std::string key;    // last key seen in an object
    std::string label;  // path of this container
  };
  bool open(bool array) {
    if (frames_.size() >= static_cast<std::size_t>(kMaxJsonDepth))
      throw JsonInputError(fmt::format("{}: nested deeper than {} levels; interprobe reads JSON at most {} deep",
                                       path_or_top(), kMaxJsonDepth, kMaxJsonDepth));
    frames_.push_back({array, 0, {}, path()});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return element_done();
  }
  bool element_done() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().next_index;
    return true;
  }
  // The path of the element being parsed now: "findings[3].evidence.x".
  std::string path() const {
    if (frames_.empty()) return {};
    const Frame& top = frames_.back();
    if (top.array) return top.label + "[" + std::to_string(top.next_index) + "]";
    return top.label.empty() ? printable(top.key, {.max_chars = 60}) : top.label + "." + printable(top.key, {.max_chars = 60});
  }
  std::string path_or_top() const {
    auto p = path();
    return p.empty() ? "(top level)" : p;
  }
  std::vector<Frame> frames_;
};

}  // namespace

json parse_json_bounded(const std::string& text) {
  DepthCheck check;
  json::sax_parse(text, &check);
  return json::parse(text);
}

std::string json_excerpt(const json& value, std::size_t max_chars) {
  // Only what is shown is dumped: a long list or object is cut after enough of its elements.
  std::string out;
  if (value.is_array() || value.is_object()) {
    out = value.is_array() ? "[" : "{";
    bool first = true;
    for (auto it = value.begin(); it != value.end() && out.size() <= max_chars; ++it, first = false) {
      if (!first) out += ",";
      if (value.is_object()) out += json(it.key()).dump() + ":";
      out += json_excerpt(it.value(), max_chars);
    }
    if (out.size() <= max_chars) out += value.is_array() ? "]" : "}";
  } else {
    out = value.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  return printable(out, {.max_chars = max_chars});
}

}  // namespace interprobe
