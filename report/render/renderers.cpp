#include "report/render/renderers.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "report/model/json.hpp"

namespace interprobe::render {

std::string escape_terminal(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  return out;
}

std::string escape_markdown(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '\\': out += "\\\\"; break;
      case '`': out += "\\`"; break;
      case '*': out += "\\*"; break;
      case '_': out += "\\_"; break;
      case '[': out += "\\["; break;
      case ']': out += "\\]"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\n': case '\r': out += ' '; break;
      default:
        if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out;
}

bool color_wanted(bool is_tty, bool no_color_flag) {
  const char* env = std::getenv("NO_COLOR");
  if (env && *env) return false;
  return is_tty && !no_color_flag;
}

std::string render(const report::Report& report, Format format, const TextStyle& style, const ViewOptions& views) {
  switch (format) {
    case Format::json: return report::to_json_text(report);
    case Format::markdown: return render_markdown(build_document(report, views));
    case Format::text: return render_text(build_document(report, views), style);
  }
  return {};
}

}  // namespace interprobe::render
