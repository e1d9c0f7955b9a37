#pragma once
// "Did you mean": the subcommand or option nearest to a mistyped one, for CLI11's "not expected"
// error (issue 36). Only close matches are offered: a word far from every name gets none.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace interprobe::cli {

// The candidate within an edit distance of max(1, length / 3) of `word`, the closest first (ties:
// the first given); nullopt when none is that close.
std::optional<std::string> nearest_name(std::string_view word, const std::vector<std::string>& candidates);

// For each argument `app` could not place (argv[1..]), a line "unknown X 'word': did you mean 'y'?"
// naming the nearest subcommand (a first word that is not an option) or option (a --word of the
// application or of the subcommand given).
std::vector<std::string> suggestions_for(const CLI::App& app, const std::vector<std::string>& args);

}  // namespace interprobe::cli
