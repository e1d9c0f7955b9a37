// Probe runner: each probe in its own error boundary; Ctrl-C keeps what was measured.
#include <gtest/gtest.h>

#include <stdexcept>

#include "common/cpuid.hpp"
#include "common/errors.hpp"
#include "common/host_root.hpp"
#include "common/interrupt.hpp"
#include "common/progress.hpp"
#include "probes/runner/probe_runner.hpp"

using namespace interprobe;

namespace {

class FnProbe final : public Probe {
 public:
  FnProbe(std::string name, std::function<void(report::Report&)> fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  std::string name() const override { return name_; }
  void run(const ProbeContext&, report::Report& r) override { fn_(r); }

 private:
  std::string name_;
  std::function<void(report::Report&)> fn_;
};

struct Harness {
  HostRoot root;
  RecordedCpuid cpuid = RecordedCpuid::unknown("test");
  ProbeContext ctx{root, cpuid, Progress::disabled()};
};


}  // namespace

TEST(ProbeRunner, FailuresAreIsolatedAndRecorded) {
  Harness h;
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<FnProbe>("throws", [](report::Report&) { throw std::runtime_error("boom"); }));
  probes.push_back(std::make_unique<FnProbe>("nogpu", [](report::Report&) { throw UnsupportedError("no GPU: driver missing"); }));
  probes.push_back(std::make_unique<FnProbe>("vendor", [](report::Report&) { throw VendorError("cudaMemcpy", 700, "illegal address"); }));
  probes.push_back(std::make_unique<FnProbe>("nonstd", [](report::Report&) { throw 42; }));
  probes.push_back(std::make_unique<FnProbe>("fine", [](report::Report& r) { r.system = report::SystemSection{}; }));
  report::Report r;
  int checkpoints = 0;
  auto outcome = run_probes(probes, h.ctx, r, [&](const report::Report&) { ++checkpoints; });
  EXPECT_FALSE(outcome.interrupted);
  EXPECT_FALSE(outcome.input_error);
  ASSERT_EQ(r.probes.size(), 5u);
  EXPECT_EQ(r.probes[0].status, report::ProbeStatus::failed);
  EXPECT_EQ(r.probes[0].reason, "boom");
  EXPECT_EQ(r.probes[1].status, report::ProbeStatus::unsupported);
  EXPECT_EQ(r.probes[1].reason, "no GPU: driver missing");
  EXPECT_EQ(r.probes[2].status, report::ProbeStatus::failed);
  EXPECT_NE(r.probes[2].reason->find("cudaMemcpy failed with code 700"), std::string::npos) << *r.probes[2].reason;
  EXPECT_EQ(r.probes[3].status, report::ProbeStatus::failed);
  EXPECT_EQ(r.probes[4].status, report::ProbeStatus::ok);
  EXPECT_TRUE(r.system.has_value());
  EXPECT_EQ(checkpoints, 5);
}

TEST(ProbeRunner, InputErrorIsRecordedAndReported) {
  Harness h;
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<FnProbe>("bad", [](report::Report&) { throw InputError("fixture/x: garbage"); }));
  probes.push_back(std::make_unique<FnProbe>("after", [](report::Report&) {}));
  report::Report r;
  auto outcome = run_probes(probes, h.ctx, r);
  ASSERT_TRUE(outcome.input_error);
  EXPECT_EQ(*outcome.input_error, "fixture/x: garbage");
  EXPECT_EQ(r.probes[1].status, report::ProbeStatus::ok);
}

TEST(ProbeRunner, InterruptKeepsPartialResultsAndSkipsTheRest) {
  Harness h;
  clear_interrupt();
  std::vector<std::unique_ptr<Probe>> probes;
  probes.push_back(std::make_unique<FnProbe>("first", [](report::Report&) {}));
  probes.push_back(std::make_unique<FnProbe>("measuring", [](report::Report& r) {
    r.system = report::SystemSection{};
    r.system->logical_cpus = 8;  // measured before Ctrl-C
    request_interrupt();
    throw_if_interrupted();
    r.system->logical_cpus = 999;  // never reached
  }));
  bool third_ran = false;
  probes.push_back(std::make_unique<FnProbe>("third", [&](report::Report&) { third_ran = true; }));
  report::Report r;
  auto outcome = run_probes(probes, h.ctx, r);
  clear_interrupt();
  EXPECT_TRUE(outcome.interrupted);
  EXPECT_FALSE(third_ran);
  ASSERT_EQ(r.probes.size(), 3u);
  EXPECT_EQ(r.probes[0].status, report::ProbeStatus::ok);
  EXPECT_EQ(r.probes[1].status, report::ProbeStatus::skipped);
  EXPECT_EQ(r.probes[1].reason, "interrupted");
  EXPECT_EQ(r.probes[2].status, report::ProbeStatus::skipped);
  ASSERT_TRUE(r.system);
  EXPECT_EQ(r.system->logical_cpus, 8);
}
