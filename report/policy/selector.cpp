#include "report/policy/selector.hpp"

#include <stdexcept>

namespace interprobe::policy {

namespace {

// Backtracking over at most a handful of wildcards per pattern; paths are short.
bool match_from(std::string_view p, std::string_view s, std::vector<std::string>& caps) {
  if (p.empty()) return s.empty();
  if (p[0] == '*') {
    bool deep = p.size() > 1 && p[1] == '*';
    std::string_view rest = p.substr(deep ? 2 : 1);
    for (std::size_t n = 0; n <= s.size(); ++n) {
      if (n > 0 && !deep && s[n - 1] == '/') break;
      caps.emplace_back(s.substr(0, n));
      if (match_from(rest, s.substr(n), caps)) return true;
      caps.pop_back();
    }
    return false;
  }
  if (s.empty() || p[0] != s[0]) return false;
  return match_from(p.substr(1), s.substr(1), caps);
}

}  // namespace

std::optional<std::vector<std::string>> match_glob(std::string_view pattern, std::string_view path) {
  std::vector<std::string> caps;
  if (!match_from(pattern, path, caps)) return std::nullopt;
  return caps;
}

bool is_glob(std::string_view pattern) { return pattern.find('*') != std::string_view::npos; }

std::size_t wildcard_count(std::string_view pattern) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i)
    if (pattern[i] == '*') {
      ++n;
      if (i + 1 < pattern.size() && pattern[i + 1] == '*') ++i;
    }
  return n;
}

std::string substitute_captures(const std::string& templ, const std::vector<std::string>& captures) {
  std::string out;
  for (std::size_t i = 0; i < templ.size(); ++i) {
    if (templ[i] == '{') {
      std::size_t close = templ.find('}', i);
      if (close != std::string::npos && close > i + 1) {
        std::string digits = templ.substr(i + 1, close - i - 1);
        if (digits.find_first_not_of("0123456789") == std::string::npos) {
          std::size_t n = std::stoul(digits);
          if (n == 0 || n > captures.size()) throw std::out_of_range("{" + digits + "}");
          out += captures[n - 1];
          i = close;
          continue;
        }
      }
    }
    out += templ[i];
  }
  return out;
}

}  // namespace interprobe::policy
