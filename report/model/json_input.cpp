// Parsing a report someone handed us: bounded in nesting before any of it is decoded.

#include <fmt/format.h>

#include "report/model/json_input.hpp"

#include "report/model/json.hpp"
#include "report/model/schema_check.hpp"

namespace interprobe::report {

using json = nlohmann::json;

namespace {

// Follows the parser's events to know the key path of the element being parsed, so a report
// that is too deep or holds an unreadable number is named where it breaks.
class PathTracker {
 public:
  void on(json::parse_event_t event, const json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (frames_.size() >= static_cast<std::size_t>(kMaxReportDepth))
          throw ReportFormatError(fmt::format("{}: nested deeper than {} levels; a report is at most {} deep",
                                              path_or_top(), kMaxReportDepth, kMaxReportDepth));
        frames_.push_back({event == json::parse_event_t::array_start, 0, {}, position()});
        break;
      case json::parse_event_t::key:
        if (!frames_.empty()) frames_.back().key = parsed.get<std::string>();
        break;
      case json::parse_event_t::value: element_done(); break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        if (!frames_.empty()) frames_.pop_back();
        element_done();
        break;
    }
  }
  // The path of the element being parsed now: "findings[3].evidence.x".
  std::string path() const { return frames_.empty() ? std::string() : frames_.back().label + position_in_top(); }
  std::string path_or_top() const {
    auto p = path();
    return p.empty() ? "(top level)" : p;
  }

 private:
  struct Frame {
    bool array;
    std::size_t next_index;
    std::string key;    // last key seen in an object
    std::string label;  // path of this container
  };
  std::string position() const { return frames_.empty() ? std::string() : path(); }
  std::string position_in_top() const {
    const Frame& top = frames_.back();
    if (top.array) return "[" + std::to_string(top.next_index) + "]";
    return top.label.empty() ? top.key : "." + top.key;
  }
  void element_done() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().next_index;
  }
  std::vector<Frame> frames_;
};

}  // namespace

json parse_bounded(const std::string& text) {
  PathTracker tracker;
  auto callback = [&tracker](int, json::parse_event_t event, json& parsed) {
    tracker.on(event, parsed);
    return true;
  };
  try {
    return json::parse(text, callback);
  } catch (const json::parse_error&) {
    throw;
  } catch (const json::exception& e) {
    // Not syntax: a value the parser cannot hold, e.g. 1e999 (beyond double range).
    throw ReportFormatError(fmt::format("{}: unreadable value ({})", tracker.path_or_top(), e.what()));
  }
}

}  // namespace interprobe::report
