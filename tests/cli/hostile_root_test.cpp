// End to end: `run`, `topo`, `virt` and `snapshot` on a hostile --root tree and on an archive of
// it, one attack family per suite (HostileRoot/<Family>.<Command><Tree|Archive>), each run under
// a time and memory limit. Every run must end in time with exit 0 or 2, open nothing in a
// canary directory beside the root (inotify, atime as a second signal), change nothing outside
// its output directory (lstat listing of the whole sandbox, canary and root included; the
// private TMPDIR must be empty again) and print no terminal control sequences.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include "support/canary_watch.hpp"
#include "support/hostile_tree.hpp"
#include "support/run_binary.hpp"
#include "support/terminal_text.hpp"
#include "support/sanitizers.hpp"

namespace interprobe::testing {
namespace {

namespace fs = std::filesystem;

// A run on these small trees takes well under a second (up to 7 s seen on a loaded 2-core VM);
// a FIFO or a device node that is read blindly never ends, so this is the line between the
// two. Sanitizer builds run several times slower: the same line, scaled.
#if defined(INTERPROBE_TESTS_INSTRUMENTED)
constexpr std::chrono::seconds kRunLimit{60};
#else
constexpr std::chrono::seconds kRunLimit{20};
#endif
// Far above any honest run; a runaway read of a device or a huge file passes it in seconds.
constexpr std::uint64_t kRssLimitBytes = 2ull << 30;

std::string capitalized(std::string s) {
  s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string joined(const std::vector<std::string>& lines, std::size_t at_most = 25) {
  std::string out;
  for (std::size_t i = 0; i < lines.size() && i < at_most; ++i) out += "\n    " + printable(lines[i]);
  if (lines.size() > at_most) out += "\n    ... " + std::to_string(lines.size() - at_most) + " more";
  return out;
}

// The -o name: snapshot writes a directory from a tree (redaction acts there) and an archive
// from an archive (staged in TMPDIR, renamed from a predictable temp name).
std::string output_name(const std::string& command, bool archive, HostileFamily family) {
  if (command != "snapshot") return command + ".json";
  bool to_archive = archive || family == HostileFamily::output_links || family == HostileFamily::output_temp_links;
  return to_archive ? "snap.tar.gz" : "snap";
}

void check_hostile_run(HostileFamily family, const std::string& command, bool archive) {
  HostileSandbox box(family);
  if (archive) box.build_archive();
  std::string name = output_name(command, archive, family);
  std::vector<std::string> args = {command, "--root", (archive ? box.archive() : box.root()).string(), "--no-color",
                                   "-o", (box.out() / name).string()};
  std::string context = "interprobe " + command + " --root " + (archive ? "<archive>" : "<tree>") + " -o out/" +
                        name + "\n  planted:" + joined(box.planted());
  if (family == HostileFamily::output_links) context += "\n  out/" + name + " -> canary/victim-output";
  if (family == HostileFamily::output_temp_links || family == HostileFamily::all_in_one)
    context += "\n  out/" + name + ".tmp.<pid>, out/." + name + ".tmp.<pid> -> canary/victim-tmp";

  CanaryWatch watch(box.canary());
  const std::vector<std::string> not_compared = {"box/out", "box/tmp"};
  Listing before = list_tree(box.outer(), not_compared);
  watch.events();  // the listing's own directory opens

  RunLimits limits;
  limits.time = kRunLimit;
  limits.rss_bytes = kRssLimitBytes;
  limits.before_exec = [&](int pid) { box.plant_output_links(name, pid); };
  Process p = run_interprobe(args, {"TMPDIR=" + box.tmp().string()}, limits);

  std::vector<std::string> canary_events = watch.events();
  std::vector<std::string> atimes = watch.atime_changes();
  std::vector<std::string> changed = diff_listings(before, list_tree(box.outer(), not_compared));
  Listing tmp_after = list_tree(box.tmp());
  tmp_after.erase(".");
  std::string outcome = "\n  exit " + std::to_string(p.exit_code) + " after " + std::to_string(p.seconds) +
                        " s\n  stderr: " + printable(p.err.substr(0, 2000));

  // One line per run in the log, pass or fail: which defence answered (exit 2 and why, or 0).
  std::string first_line = p.err.substr(0, p.err.find('\n')).substr(0, 300);
  std::cout << "  [hostile] " << command << (archive ? " archive" : " tree") << ": "
            << (p.timed_out ? "timed out" : p.memory_exceeded ? "memory limit" : "exit " + std::to_string(p.exit_code))
            << " in " << p.seconds << " s; " << printable(first_line) << "\n";
  EXPECT_FALSE(p.timed_out) << "still running after " << kRunLimit.count() << " s (killed): " << context << outcome;
  EXPECT_FALSE(p.memory_exceeded) << "resident memory passed " << (kRssLimitBytes >> 20) << " MiB (killed): "
                                  << context << outcome;
  if (!p.timed_out && !p.memory_exceeded) {
    EXPECT_TRUE(p.exit_code == 0 || p.exit_code == 2) << "exit must be 0 or 2: " << context << outcome;
  }
  EXPECT_TRUE(canary_events.empty()) << "the canary outside the root was touched:" << joined(canary_events) << "\n  "
                                     << context << outcome;
  EXPECT_TRUE(atimes.empty()) << "canary files were read (atime moved):" << joined(atimes) << "\n  " << context;
  EXPECT_TRUE(changed.empty()) << "changed outside the output directory:" << joined(changed) << "\n  " << context
                               << outcome;
  std::vector<std::string> left;
  for (const auto& [path, what] : tmp_after) left.push_back(path + ": " + what);
  EXPECT_TRUE(left.empty()) << "left behind in TMPDIR:" << joined(left) << "\n  " << context;
  for (const auto& [stream, text] : {std::pair<const char*, const std::string&>{"stdout", p.out}, {"stderr", p.err}}) {
    auto hazards = terminal_hazards(text);
    EXPECT_TRUE(hazards.empty()) << stream << " carries terminal control sequences:" << joined(hazards) << "\n  "
                                 << context;
  }
  if (family == HostileFamily::clean) {  // the control: the base tree itself is a good machine
    EXPECT_EQ(p.exit_code, 0) << context << outcome;
    EXPECT_TRUE(fs::exists(box.out() / name)) << "no output written: " << context << outcome;
  }
}

class HostileRunTest : public ::testing::Test {
 public:
  HostileRunTest(HostileFamily family, std::string command, bool archive)
      : family_(family), command_(std::move(command)), archive_(archive) {}
  void TestBody() override { check_hostile_run(family_, command_, archive_); }

 private:
  HostileFamily family_;
  std::string command_;
  bool archive_;
};

// HostileRoot/<Family>.<Command><Tree|Archive>, so a failing name says which family still breaks.
const bool registered = [] {
  for (HostileFamily family : all_hostile_families())
    for (const char* command : {"run", "topo", "virt", "snapshot"})
      for (bool archive : {false, true}) {
        if (!archive && !family_applies_to_tree(family)) continue;
        std::string suite = std::string("HostileRoot/") + family_name(family);
        std::string test = capitalized(command) + (archive ? "Archive" : "Tree");
        ::testing::RegisterTest(suite.c_str(), test.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                                [=]() -> ::testing::Test* { return new HostileRunTest(family, command, archive); });
      }
  return true;
}();

}  // namespace
}  // namespace interprobe::testing
