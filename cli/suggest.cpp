#include "cli/suggest.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace interprobe::cli {

namespace {

// Levenshtein distance (insert, delete, substitute), two rows.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  std::iota(previous.begin(), previous.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(previous, current);
  }
  return previous[b.size()];
}

// "--format" and "-o" of every option of `app` (the long names only for the comparison's sake).
void add_option_names(const CLI::App& app, std::vector<std::string>& out) {
  for (const CLI::Option* o : app.get_options()) {
    for (const auto& name : o->get_lnames()) out.push_back("--" + name);
  }
}

}  // namespace

std::optional<std::string> nearest_name(std::string_view word, const std::vector<std::string>& candidates) {
  std::size_t limit = std::max<std::size_t>(1, word.size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  return best;
}

std::vector<std::string> suggestions_for(const CLI::App& app, const std::vector<std::string>& args) {
  std::vector<std::string> commands, options;
  add_option_names(app, options);
  const CLI::App* chosen = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
    if (sub->parsed()) chosen = sub;
  }
  if (chosen) add_option_names(*chosen, options);
  std::vector<std::string> out;
  bool first_word = true;
  for (const auto& arg : args) {
    if (arg.rfind("--", 0) == 0 && arg.size() > 2) {
      std::string name = arg.substr(0, arg.find('='));
      if (std::find(options.begin(), options.end(), name) != options.end()) continue;
      if (auto near = nearest_name(name, options)) out.push_back(fmt::format("unknown option '{}': did you mean '{}'?", name, *near));
      continue;
    }
    if (arg.rfind('-', 0) == 0 || !first_word) continue;
    first_word = false;
    if (chosen || std::find(commands.begin(), commands.end(), arg) != commands.end()) continue;
    if (auto near = nearest_name(arg, commands)) out.push_back(fmt::format("unknown command '{}': did you mean '{}'?", arg, *near));
  }
  return out;
}

}  // namespace interprobe::cli
