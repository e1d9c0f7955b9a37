#include "cli/session.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>

#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/exit_codes.hpp"
#include "cli/features.hpp"
#include "common/cpuid.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/interrupt.hpp"
#include "common/output_file.hpp"
#include "common/progress.hpp"
#include "common/stopwatch.hpp"
#include "common/text.hpp"
#include "probes/host/system_probe.hpp"
#include "probes/runner/probe_runner.hpp"
#include "probes/runtime/vendor_versions.hpp"
#if INTERPROBE_HAVE_LIBARCHIVE
#include "probes/snapshot/archive.hpp"
#include "probes/telemetry/measurement_recorder.hpp"
#endif
#include "report/analysis/findings.hpp"
#include "model/json.hpp"
#include "model/report_file_writer.hpp"
#include "report/render/prometheus.hpp"
#include "report/render/renderers.hpp"

namespace interprobe::cli {

std::string utc_now_iso8601() {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

namespace {

// Fail before measuring, not after: a report that cannot be written is measurement lost.
void check_output_writable(const std::optional<std::string>& output) {
  if (!output) return;
  check_output_target(*output, "-o", ExistingOutput::replace_regular);
  check_output_target(report::partial_report_path(*output), "-o (partial save)", ExistingOutput::replace_regular);
}

// The --export-* files: (option, file, format) for each one given.
std::vector<std::tuple<const char*, std::string, render::Format>> exports_of(const GlobalOptions& o) {
  std::vector<std::tuple<const char*, std::string, render::Format>> out;
  if (o.export_html) out.emplace_back("--export-html", *o.export_html, render::Format::html);
  if (o.export_markdown) out.emplace_back("--export-markdown", *o.export_markdown, render::Format::markdown);
  if (o.export_prometheus) out.emplace_back("--export-prometheus", *o.export_prometheus, render::Format::prometheus);
  return out;
}

void check_exports_writable(const GlobalOptions& o) {
  for (const auto& [option, file, format] : exports_of(o)) check_output_target(file, option, ExistingOutput::replace_regular);
}

void write_exports(const report::Report& r, const GlobalOptions& o) {
  render::ViewOptions views = o.views;
  views.all_library_details = o.verbose;
  for (const auto& [option, file, format] : exports_of(o))
    write_output_file(file, render::render(r, format, render::TextStyle{}, views), option, ExistingOutput::replace_regular);
}

// Writes the report where the run's outcome allows: the named file only for a completed or an
// interrupted run; otherwise beside it, leaving an earlier report at the named path as it was.
void save_report(const report::Report& r, const std::string& output, bool replace_named) {
  auto partial = report::partial_report_path(output);
  if (!replace_named) {
    write_output_file(partial, report::to_json_text(r), "-o (partial save)", ExistingOutput::replace_regular);
    std::cerr << fmt::format("interprobe: -o {} left as it was (this run failed); its report is in {}\n", printable(output),
                             printable(partial.string()));
    return;
  }
  report::write_report_file(output, r);
  struct stat st {};
  if (::lstat(partial.c_str(), &st) == 0 && S_ISREG(st.st_mode)) ::unlink(partial.c_str());
}

// COLUMNS when it is a number (shells export it; tests set it), else the width of the terminal
// standard output is (100 when it will not say), else -- a pipe or a file -- no limit: tables
// stay whole for grep, less -S and a file, as nvidia-smi and lstopo print them (issue 36).
std::size_t terminal_columns(int fd) {
  if (const char* env = std::getenv("COLUMNS")) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n > 0 && n < 10000) return static_cast<std::size_t>(n);
  }
  if (::isatty(fd) != 1) return render::kUnlimitedWidth;
  struct winsize ws {};
  if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 100;
}

void print_report(const report::Report& report, const GlobalOptions& o) {
  render::Format format = render::Format::text;
  if (o.json || o.format == "json") format = render::Format::json;
  else if (o.format == "markdown") format = render::Format::markdown;
  else if (o.format == "html") format = render::Format::html;
  else if (o.format == "prometheus") format = render::Format::prometheus;
  render::TextStyle style = text_style(o);
  render::ViewOptions views = o.views;
  views.all_library_details = o.verbose;
  std::cout << render::render(report, format, style, views) << std::flush;
}

}  // namespace

namespace {

// -o is the JSON report on every command (issue 36): a name that says page, markdown or metrics
// would receive JSON, so it is refused with the option that writes what the name asks for.
void check_output_meaning(const std::string& command, const GlobalOptions& o) {
  if (!o.output || command == "snapshot") return;
  std::string ext = std::filesystem::path(*o.output).extension().string();
  for (auto& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const char* option = ext == ".html" || ext == ".htm" ? "--export-html"
                       : ext == ".md"                  ? "--export-markdown"
                       : ext == ".prom"                ? "--export-prometheus"
                                                       : nullptr;
  if (option)
    throw InputError(fmt::format("-o {}: -o always writes the JSON report (on every command); write the {} with {} {} "
                                 "(and the JSON, if wanted, with -o FILE.json)",
                                 printable(*o.output), ext == ".md" ? "markdown" : ext == ".prom" ? "metrics" : "page", option,
                                 printable(*o.output)));
}

}  // namespace

void check_output_format(const std::string& command, const GlobalOptions& o) {
  check_output_meaning(command, o);
  if (o.export_prometheus) render::require_prometheus();
  // check's results are a list of items (text, markdown, JSON, JUnit); a snapshot is an archive.
  // Neither has a page to draw: say so instead of printing text under an html request.
  if (o.format == "html" && (command == "check" || command == "snapshot"))
    throw InputError(fmt::format("{} --format html: {} has no HTML page (text, markdown or json{}); the page of a report: "
                                 "`interprobe report FILE --format html`",
                                 command, command, command == "check" ? ", and --junit FILE for CI" : ""));
  if (o.format != "prometheus") return;
  if (command == "check" || command == "compare" || command == "snapshot")
    throw InputError(fmt::format("{} --format prometheus: {} prints no report to export; export a report's metrics with "
                                 "`interprobe report FILE --format prometheus`",
                                 command, command));
  render::require_prometheus();
}

render::TextStyle text_style(const GlobalOptions& o) {
  return {render::color_wanted(::isatty(STDOUT_FILENO) == 1, o.no_color), terminal_columns(STDOUT_FILENO)};
}

OpenedRoot open_root(const GlobalOptions& o) {
  if (!o.root) return OpenedRoot{nullptr, HostRoot(), "/"};
  std::filesystem::path given(*o.root);
  std::error_code ec;
  if (std::filesystem::is_regular_file(given, ec)) {
#if INTERPROBE_HAVE_LIBARCHIVE
    auto temp = std::make_shared<snapshot::TempDir>();
    snapshot::extract_archive(given, temp->path());
    return OpenedRoot{temp, HostRoot(temp->path()), given.string()};
#else
    throw InputError(fmt::format("--root {}: snapshot archives are compiled out (built without libarchive); extract "
                                 "it with tar and pass the directory, or rebuild with libarchive-dev installed",
                                 given.string()));
#endif
  }
  HostRoot root(given);
  std::string label = root.root().string();
  return OpenedRoot{nullptr, std::move(root), label};
}

report::ToolInfo tool_info(bool list_all_libraries, bool live) {
  report::ToolInfo t;
  t.version = interprobe_version();
  t.features = compiled_features();
  if (!live) {
    t.libraries_not_probed = "replaying a --root tree: no live library or device is touched";
    return t;
  }
  t.libraries = list_all_libraries ? all_vendor_libraries_info() : opened_vendor_libraries();
  if (t.libraries.empty()) t.libraries_not_probed = "no probe of this run opened one (--verbose lists those installed)";
  return t;
}

void silence_stdout() {
  std::cout.flush();
  std::fflush(stdout);
  int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_fd >= 0) {
    ::dup2(null_fd, STDOUT_FILENO);
    ::close(null_fd);
  }
}

void emit_report(const report::Report& report, const GlobalOptions& o) {
  // Bad options fail before anything is printed.
  if (o.output) check_output_target(*o.output, "-o", ExistingOutput::replace_regular);
  check_exports_writable(o);
  print_report(report, o);
  if (o.output) report::write_report_file(*o.output, report);
  write_exports(report, o);
}

std::vector<std::string> fail_on_hits(const report::Report& report, const GlobalOptions& o) {
  std::vector<std::string> hits;
  auto threshold = report::parse_enum<report::Severity>(o.fail_on);
  if (!threshold) return hits;  // "never"
  for (const auto& f : report.findings)
    if (f.severity >= *threshold) hits.push_back(fmt::format("{} ({})", f.id, report::to_string(f.severity)));
  return hits;
}

int fail_on_exit_code(const report::Report& report, const GlobalOptions& o) {
  std::vector<std::string> hits = fail_on_hits(report, o);
  if (hits.empty()) return kExitOk;
  std::cerr << fmt::format("interprobe: --fail-on {}: {} finding(s) at or above it: {}\n", o.fail_on, hits.size(),
                           fmt::join(hits, ", "));
  return kExitCheckFailed;
}

namespace {

// The CPUID source: a malformed cpuid.txt costs one signal family, not the run. The
// virtualization probe records this origin as a warning in its evidence and decides from the
// other families; `error` is still an input error: reported, exit 2, after the report is out.
struct SessionCpuid {
  std::unique_ptr<CpuidSource> source;
  std::optional<std::string> error;
};

SessionCpuid open_cpuid(const HostRoot& root) {
  try {
    return {make_cpuid_source(root), std::nullopt};
  } catch (const RootEscapeError&) {
    throw;  // a hostile tree stays fatal
  } catch (const InputError& e) {
    return {std::make_unique<RecordedCpuid>(RecordedCpuid::unknown(std::string("warning: ") + e.what())), e.what()};
  }
}

// What the report holds so far, saved beside -o after each probe. A failed save is said once;
// measuring goes on and the final write says whether the report could be kept. The vendor
// libraries the probes opened so far go in too: a process killed before its final write leaves
// this file, and a simulated run's must say it was simulated.
std::function<void(const report::Report&)> partial_saver(const std::optional<std::string>& output,
                                                         bool list_all_libraries, bool live) {
  auto failed = std::make_shared<bool>(false);
  return [output, failed, list_all_libraries, live](const report::Report& so_far) {
    if (!output || *failed) return;
    try {
      report::Report partial = so_far;
      partial.tool = tool_info(list_all_libraries, live);
      write_output_file(report::partial_report_path(*output), report::to_json_text(partial), "-o (partial save)",
                        ExistingOutput::replace_regular);
    } catch (const InputError& e) {
      *failed = true;
      std::cerr << "interprobe: warning: " << printable(e.what()) << "; measuring goes on\n";
    }
  };
}

// The exit code of the probes' outcome (before --fail-on), and the line that says why.
int outcome_exit_code(const RunOutcome& outcome, const std::optional<std::string>& cpuid_error, UnsupportedPolicy policy,
                      std::size_t probe_count, const report::Report& r, std::string& failure) {
  if (outcome.interrupted) return kExitInterrupted;
  if (outcome.input_error || cpuid_error) {
    failure = "interprobe: error: " + printable(outcome.input_error ? *outcome.input_error : *cpuid_error) + "\n";
    return kExitUsage;
  }
  if (policy == UnsupportedPolicy::exit_code_4 && probe_count == 1 && !r.probes.empty() &&
      r.probes.front().status == report::ProbeStatus::unsupported) {
    failure = fmt::format("interprobe: {} cannot run here: {}\n", r.probes.front().name,
                          printable(r.probes.front().reason.value_or("")));
    return kExitUnsupported;
  }
  return kExitOk;
}

}  // namespace

SessionResult run_session(const GlobalOptions& o, const std::vector<std::unique_ptr<Probe>>& probes,
                          UnsupportedPolicy policy, const std::function<void(report::Report&)>& after_probes) {
  Stopwatch clock;
  check_output_writable(o.output);
  check_exports_writable(o);
  std::optional<OpenedRoot> opened_root;
  try {
    opened_root.emplace(open_root(o));
  } catch (const InterruptedError&) {  // Ctrl-C while a --root archive was read or extracted
    std::cerr << "interprobe: interrupted before probing; nothing was written\n";
    SessionResult stopped;
    stopped.exit_code = kExitInterrupted;
    return stopped;
  }
  const OpenedRoot& opened = *opened_root;
  const HostRoot& root = opened.root;
  SessionCpuid cpuid = open_cpuid(root);

  SessionResult result;
  report::Report& r = result.report;
  r.tool = tool_info(o.verbose, root.is_live());
  r.host = read_host_identity(root);
  r.host.root = opened.label;
  r.host.started_at = utc_now_iso8601();

  install_interrupt_handler();
  Progress progress = Progress::for_terminal(o.quiet);
  // Started by the first probe that measures a GPU; stopped when the session ends.
  telemetry::MeasurementRecorder recorder;
  ProbeContext ctx{root, *cpuid.source, progress};
  if (root.is_live()) ctx.windows = &recorder;
  RunOutcome outcome = run_probes(probes, ctx, r, partial_saver(o.output, o.verbose, root.is_live()));
  r.tool = tool_info(o.verbose, root.is_live());  // again: now with the libraries the probes opened
  if (after_probes && !outcome.interrupted) {
    try {
      after_probes(r);
    } catch (const std::exception& e) {
      // What was measured is kept; the derived part says it is missing.
      std::cerr << "interprobe: warning: " << printable(e.what()) << "\n";
    }
  }
  r.host.duration_s = clock.elapsed_s();
  r.findings = analysis::derive_findings(r);
  if (o.report_on_stdout) print_report(r, o);

  std::string failure;
  result.exit_code = outcome_exit_code(outcome, cpuid.error, policy, probes.size(), r, failure);
  std::cerr << failure;
  if (outcome.interrupted && !o.quiet) std::cerr << "interprobe: interrupted; the report keeps what was measured\n";
  if (o.output) save_report(r, *o.output, result.exit_code == kExitOk || result.exit_code == kExitInterrupted);
  if (result.exit_code == kExitOk || result.exit_code == kExitInterrupted) write_exports(r, o);
  if (result.exit_code == kExitOk) result.exit_code = fail_on_exit_code(r, o);
  return result;
}

}  // namespace interprobe::cli
