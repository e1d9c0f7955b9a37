// Hostile input through the binary: reports and option values that used to crash, hang or put
// control sequences on the terminal end in exit 2 with a message naming what was wrong.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "model/json.hpp"
#include "support/run_binary.hpp"
#include "support/temp_tree.hpp"

using interprobe::testing::run_interprobe;
namespace fs = std::filesystem;
using interprobe::testing::TempTree;

namespace {

const std::string kMinimal = std::string(INTERPROBE_FIXTURES) + "/minimal-kvm-guest";
// ESC sequences, raw 8-bit CSI, U+009B and U+009D as UTF-8, BEL, U+202E.
const std::string kHostile = "\x1b]0;pwned\x07\x1b[2J\x9b" "31m\xc2\x9b" "1m\xc2\x9d" "2;x\x07\xe2\x80\xae" "gpj.exe";

void expect_no_control_sequence(const std::string& text) {
  for (unsigned char c : text) {
    EXPECT_FALSE(c < 0x20 && c != '\n') << "control byte " << int(c) << " in: " << text;
    EXPECT_NE(c, 0x9b) << text;
    EXPECT_NE(c, 0x9d) << text;
  }
  EXPECT_EQ(text.find("\xe2\x80\xae"), std::string::npos) << text;
}

std::string saved_report(const fs::path& dir) {
  auto file = dir / "r.json";
  auto run = run_interprobe({"run", "--root", kMinimal, "--only", "system", "-q", "-o", file.string()});
  if (run.exit_code != 0) throw std::runtime_error(run.err);
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

}  // namespace

TEST(UntrustedInputCli, DeeplyNestedEvidenceIsExit2NamingThePath) {
  TempTree dir;
  std::string text = saved_report(dir.path());
  auto pos = text.find("\"findings\": [");
  ASSERT_NE(pos, std::string::npos);
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
  deep += "1" + std::string(100000, '}');
  text.insert(pos + 13, "{\"id\":\"x\",\"severity\":\"warn\",\"title\":\"t\",\"remedy\":\"r\",\"evidence\":" + deep + "}" +
                            (text.compare(pos + 13, 1, "]") == 0 ? "" : ","));
  write(dir.path() / "deep.json", text);
  auto p = run_interprobe({"report", (dir.path() / "deep.json").string()});
  EXPECT_EQ(p.exit_code, 2) << p.err.substr(0, 400);
  EXPECT_NE(p.err.find("deep.json: findings[0].evidence.a.a"), std::string::npos) << p.err.substr(0, 400);
}

TEST(UntrustedInputCli, WrongTypesAndHugeNumbersAreExit2NotInternalErrors) {
  TempTree dir;
  std::string text = saved_report(dir.path());
  auto pos = text.find("\"duration_s\": ");
  ASSERT_NE(pos, std::string::npos);
  std::string huge = text;
  huge.replace(pos, 14, "\"duration_s\": 1e999, \"x\": ");
  write(dir.path() / "huge.json", huge);
  auto p = run_interprobe({"report", (dir.path() / "huge.json").string()});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("huge.json: host.duration_s"), std::string::npos) << p.err;
}

TEST(UntrustedInputCli, ReportFromADeviceEndsAtOnce) {
  auto started = std::chrono::steady_clock::now();
  auto p = run_interprobe({"report", "/dev/zero"});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("/dev/zero: not a regular file or pipe"), std::string::npos) << p.err;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

TEST(UntrustedInputCli, ReportStringsReachTheTerminalEscaped) {
  TempTree dir;
  std::string text = saved_report(dir.path());
  auto pos = text.find("\"hostname\": \"");
  ASSERT_NE(pos, std::string::npos);
  // JSON escapes for the controls; the UTF-8 ones go in raw, as a hostile writer would.
  text.insert(pos + 13, "\\u001b]0;pwned\\u0007\\u009b31m\xc2\x9d" "2;x\xe2\x80\xae");
  write(dir.path() / "hostile.json", text);
  for (const char* format : {"text", "markdown", "json", "html"}) {
    auto p = run_interprobe({"report", (dir.path() / "hostile.json").string(), "--format", format});
    ASSERT_EQ(p.exit_code, 0) << p.err;
    expect_no_control_sequence(p.out);
    EXPECT_NE(p.out.find("pwned"), std::string::npos) << format;
  }
}

// The JSON that fleet and check print (and fleet's -o) carries machine strings as \u escapes, as
// a report's JSON does: U+009B went out raw, a CSI to a terminal that `--format json` reached.
TEST(UntrustedInputCli, FleetAndCheckJsonCarryMachineStringsEscaped) {
  TempTree dir;
  std::ifstream in(std::string(INTERPROBE_SOURCE_DIR) + "/examples/reports/this-vm-run.json");
  std::string text(std::istreambuf_iterator<char>(in), {});
  auto pos = text.find("\"product\": \"");
  ASSERT_NE(pos, std::string::npos);
  text.insert(pos + 12, "\\u001b]0;pwned\\u0007\\u009b31m\xc2\x9d" "2;x\xe2\x80\xae");
  const fs::path hostile = dir.path() / "hostile.json", saved = dir.path() / "fleet.json", policy = dir.path() / "p.json";
  write(hostile, text);
  write(policy, R"({"name": "p", "items": [{"id": "kvm", "severity": "warn", "fact": "virtualization/product", "op": "==", "value": "KVM"}]})");
  for (const char* format : {"json", "text", "markdown"}) {
    fs::remove(saved);
    auto fleet = run_interprobe({"fleet", "--node-report-per-rank", hostile.string(), "--format", format, "-q", "-o", saved.string()});
    ASSERT_EQ(fleet.exit_code, 0) << fleet.err;
    expect_no_control_sequence(fleet.out);
    std::ifstream written(saved);
    std::string file((std::istreambuf_iterator<char>(written)), {});
    expect_no_control_sequence(file);
    EXPECT_NE(file.find("pwned"), std::string::npos) << format;

    auto check = run_interprobe({"check", "--policy", policy.string(), hostile.string(), "--format", format});
    EXPECT_EQ(check.exit_code, 0) << check.err;  // a warn item does not gate
    expect_no_control_sequence(check.out);
    EXPECT_NE(check.out.find("pwned"), std::string::npos) << format << ": the value is shown, escaped\n" << check.out;
  }
}

TEST(UntrustedInputCli, ErrorMessagesQuotingFileNamesAreEscaped) {
  auto p = run_interprobe({"report", "/nonexistent/" + kHostile + ".json"});
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.err.find("/nonexistent/\\x1b]0;pwned"), std::string::npos) << p.err;
  expect_no_control_sequence(p.err);
}

TEST(UntrustedInputCli, CpuidFieldInAnErrorIsEscaped) {
  TempTree dir;
  fs::copy(kMinimal, dir.path() / "root", fs::copy_options::recursive);
  write(dir.path() / "root" / "cpuid.txt", "0x1 0x0 0x0 0x0 0x0 0x0\n0x40000000 " + kHostile + " 0x0 0x0 0x0 0x0\n");
  auto p = run_interprobe({"virt", "--root", (dir.path() / "root").string(), "-q"});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("cpuid.txt:2"), std::string::npos) << p.err;
  expect_no_control_sequence(p.err);
  expect_no_control_sequence(p.out);
}

TEST(UntrustedInputCli, NonFiniteNumbersAreRefusedNamingTheOption) {
  const std::vector<std::vector<std::string>> cases = {
      {"allreduce", "--budget", "nan"},     {"allreduce", "--budget", "inf"},   {"allreduce", "--budget", "-inf"},
      {"allreduce", "--budget", "1e999"},   {"allreduce", "--timeout", "nan"},  {"allreduce", "--timeout", "inf"},
      {"allreduce", "--factor", "nan"},     {"allreduce", "--factor", "inf"},   {"bw", "--budget", "nan"},
      {"bw", "--factor", "inf"},            {"bw", "--target-cv", "nan%"},      {"allreduce", "--budget", "-1"},
      {"allreduce", "--timeout", "1e300"},
  };
  for (const auto& args : cases) {
    auto p = run_interprobe({args[0], args[1], args[2], "--root", kMinimal, "-q"});
    EXPECT_EQ(p.exit_code, 2) << args[0] << " " << args[1] << " " << args[2] << ": " << p.err;
    EXPECT_NE(p.err.find(args[1]), std::string::npos) << p.err;
    EXPECT_TRUE(p.out.empty()) << args[1] << " " << args[2] << " measured: " << p.out.substr(0, 200);
  }
}

TEST(UntrustedInputCli, HwlocXmlTroubleIsExit2WithOurMessageOnly) {
  const std::string xml = std::string(INTERPROBE_FIXTURES) + "/topology/hgx-h100-nvswitch.hwloc.xml";
  auto crashed = run_interprobe({"topo", "--hwloc-xml", xml, "-q"}, {"INTERPROBE_TEST_CRASH_HWLOC_CHILD=1"});
  EXPECT_EQ(crashed.exit_code, 2) << crashed.err;
  EXPECT_NE(crashed.err.find("--hwloc-xml " + xml + ": hwloc"), std::string::npos) << crashed.err;
  // hwloc and libxml2 print their own complaints, quoting the file raw: never on our stderr.
  TempTree dir;
  std::ifstream in(xml);
  std::string text(std::istreambuf_iterator<char>(in), {});
  auto cut = dir.path() / ("cut" + kHostile + ".xml");
  write(cut, text.substr(0, text.size() / 2) + "<object type=\"" + kHostile + "\">");
  auto p = run_interprobe({"topo", "--hwloc-xml", cut.string(), "-q"});
  EXPECT_EQ(p.exit_code, 2) << p.err;
  EXPECT_NE(p.err.find("hwloc cannot load it"), std::string::npos) << p.err;
  EXPECT_EQ(p.err.find("XML component discovery failed"), std::string::npos) << p.err;
  expect_no_control_sequence(p.err);
}

TEST(ReportCli, CtrlCWhileReadingASilentPipeIsExit130) {
  TempTree dir;
  auto fifo = dir.path() / "silent.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A writer that never writes: O_RDWR does not block on a FIFO, and keeps it open.
  int writer = ::open(fifo.c_str(), O_RDWR);
  ASSERT_GE(writer, 0);
  interprobe::testing::RunLimits limits;
  limits.time = std::chrono::seconds(20);
  limits.before_exec = [](int pid) {
    std::thread([pid] {
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
      ::kill(pid, SIGINT);
    }).detach();
  };
  auto p = interprobe::testing::run_interprobe({"report", fifo.string()}, {}, limits);
  ::close(writer);
  EXPECT_FALSE(p.timed_out);
  EXPECT_EQ(p.exit_code, 130) << p.err;
  EXPECT_NE(p.err.find("interprobe: interrupted"), std::string::npos) << p.err;
}
