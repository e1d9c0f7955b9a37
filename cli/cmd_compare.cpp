// `interprobe compare A.json B.json [C.json ...] [--baseline A.json]`: reports (or groups of
// repeated runs, "a1.json,a2.json") side by side against a baseline with a noise-aware verdict per
// metric and per path, and what differs in their settings (report/compare).
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/session.hpp"
#include "common/errors.hpp"
#include "common/json_text.hpp"
#include "common/text.hpp"
#include "common/user_file.hpp"
#include "report/compare/compare.hpp"
#include "model/json.hpp"
#include "report/render/html/html.hpp"
#include "report/render/renderers.hpp"

namespace interprobe::cli {

namespace {

// What one compare holds in memory at most: repeated runs of a group, and the bytes of every
// report given (each is parsed into a tree about 20 times its size). 50 runs of a 19 MB report
// took 146 s and 2.9 GB before these caps.
constexpr std::size_t kMaxRunsPerGroup = 32;
constexpr std::size_t kMaxCompareBytes = std::size_t{128} << 20;

struct ReadFile {
  std::string path;
  std::string text;
  std::optional<int> major;
};

std::vector<std::string> split_group(const std::string& arg) {
  std::vector<std::string> files;
  std::size_t start = 0;
  while (start <= arg.size()) {
    std::size_t comma = arg.find(',', start);
    std::string file = arg.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (file.empty()) throw InputError(fmt::format("compare: '{}' has an empty file name; write a group as A1.json,A2.json", arg));
    files.push_back(file);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return files;
}

[[noreturn]] void too_many_bytes(const std::string& path) {
  throw InputError(fmt::format("compare: the reports given hold more than {} MiB together (at {}); compare fewer reports "
                               "at once (fewer runs per group, or split the comparison in two)",
                               kMaxCompareBytes >> 20, path));
}

// Sizes first, from the file system: a comparison over the cap is refused before a byte is read
// (checking after each read parsed the first 100 MB before refusing). What stat cannot size (a
// pipe) is capped again as it is read.
void check_sizes_before_reading(const std::vector<std::string>& args) {
  for (const auto& arg : args)
    if (auto runs = split_group(arg).size(); runs > kMaxRunsPerGroup)
      throw InputError(fmt::format("compare: the group '{}' has {} runs, more than the {} a group may hold; give fewer "
                                   "runs in one group (or compare the group in two halves)",
                                   printable(arg, {.max_chars = 80}), runs, kMaxRunsPerGroup));
  std::uintmax_t bytes = 0;
  for (const auto& arg : args)
    for (const auto& path : split_group(arg)) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(path, ec)) continue;  // read_user_file names what is wrong
      auto size = std::filesystem::file_size(path, ec);
      if (!ec && (bytes += size) > kMaxCompareBytes) too_many_bytes(path);
    }
}

// Every file is read and its schema major checked before any is decoded, so reports of two
// majors are refused naming both, whichever of them this interprobe could read.
std::vector<compare::Side> read_sides(const std::vector<std::string>& args) {
  check_sizes_before_reading(args);
  std::vector<std::vector<ReadFile>> groups;
  const ReadFile* first = nullptr;
  std::size_t bytes_read = 0;
  for (const auto& arg : args) {
    groups.emplace_back();
    for (const auto& path : split_group(arg)) {
      std::string text = read_user_file(path, {path, "a report written by `interprobe run -o FILE`", report::kMaxReportBytes});
      if ((bytes_read += text.size()) > kMaxCompareBytes) too_many_bytes(path);
      groups.back().push_back({path, std::move(text), std::nullopt});
      groups.back().back().major = report::written_schema_major(groups.back().back().text);
    }
  }
  for (const auto& g : groups)
    for (const auto& f : g) {
      if (!f.major) continue;
      if (!first) first = &f;
      else if (*f.major != *first->major)
        throw InputError(fmt::format("compare: {} is schema {}.x and {} is schema {}.x; compare reports of one schema major "
                                     "(convert a 1.x report with `interprobe report OLD.json --json > NEW.json`)",
                                     first->path, *first->major, f.path, *f.major));
    }
  std::vector<compare::Side> sides;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    compare::Side side{args[i], {}};
    for (auto& f : groups[i]) {
      side.runs.push_back(report::parse_report_text(f.text, f.path));
      std::string().swap(f.text);  // its tree is built: the text is not needed any more
    }
    sides.push_back(std::move(side));
  }
  return sides;
}

std::size_t baseline_index(const std::vector<std::string>& args, const std::optional<std::string>& baseline) {
  if (!baseline) return 0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == *baseline) return i;
    for (const auto& f : split_group(args[i]))
      if (f == *baseline) return i;
  }
  throw InputError(fmt::format("--baseline {}: not one of the reports given; name one of them (or its group)", *baseline));
}

}  // namespace

Command add_compare_command(CLI::App& app, GlobalOptions& options) {
  Command c;
  c.app = app.add_subcommand("compare", "Compare reports (or groups of runs) against a baseline, with noise-aware verdicts");
  auto files = std::make_shared<std::vector<std::string>>();
  auto baseline = std::make_shared<std::optional<std::string>>();
  auto min_change = std::make_shared<double>(5.0);
  auto detail = std::make_shared<bool>(false);
  c.app->add_option("REPORTS", *files, "Reports written by `interprobe run -o FILE`; repeated runs as A1.json,A2.json")
      ->required()
      ->expected(2, 64);
  c.app->add_option("--baseline", *baseline, "The report (or group) the others are compared with (default: the first)")
      ->type_name("FILE");
  c.app->add_option("--min-change", *min_change, "Smaller differences (percent of the baseline) are `same` even when real")
      ->check(CLI::Range(0.0, 1000.0))
      ->default_str("5");
  c.app->add_flag("--detail", *detail,
                  "Text: every setting, path and metric with its test after the summary (markdown, HTML and JSON always "
                  "carry them)");
  c.execute = [&options, files, baseline, min_change, detail]() {
    if (options.output) throw InputError("compare: -o is not supported; redirect stdout (--format json > FILE)");
    std::size_t base = baseline_index(*files, *baseline);
    compare::Options o;
    o.min_change_fraction = *min_change / 100;
    const std::vector<compare::Side> sides = read_sides(*files);
    compare::Comparison result = compare::compare_sides(sides, base, o);
    if (options.format == "html") {
      // The tables as in text, and each report's curves (its first run) overlaid per chart.
      // Legends name each report by its file name, or by what was given where two names collide.
      std::vector<render::html::LabelledReport> reports;
      std::set<std::string> names;
      for (const auto& side : sides) names.insert(std::filesystem::path(side.label).filename().string());
      const bool short_names = names.size() == sides.size();
      for (const auto& side : sides)
        reports.push_back({short_names ? std::filesystem::path(side.label).filename().string() : side.label, &side.runs.front()});
      std::vector<render::html::Figure> figures;
      for (const auto& chart : render::html::overlay_charts(reports, base))
        figures.push_back(render::html::figure("paths over their sizes", chart));
      render::Document doc = compare::comparison_document(result);
      doc.title = "interprobe compare";
      std::cout << render::html::page(doc, figures);
    } else if (options.json || options.format == "json") {
      std::cout << json_text(compare::comparison_json(result));
    } else {
      render::Document doc = compare::comparison_document(result, *detail || options.format == "markdown");
      if (options.format == "markdown") std::cout << render::render_markdown(doc);
      else std::cout << render::render_text(doc, text_style(options));
    }
    std::cout << std::flush;
    return 0;
  };
  return c;
}

}  // namespace interprobe::cli
