// Policy files (`check --policy`): any bytes parse or throw InputError naming the file, item or
// key; a policy that parsed is evaluated against a report with every section present without
// throwing, and its summary counts every item once.
#include <string>

#include "common/errors.hpp"
#include "report/policy/check.hpp"
#include "report/policy/policy.hpp"
#include "tests/fuzz/fuzz_target.hpp"

namespace {

// A small report with the sections selectors reach into: a sweep, an all-reduce, a finding.
const interprobe::report::Report& sample_report() {
  static const interprobe::report::Report r = [] {
    using namespace interprobe::report;
    Report out;
    out.bandwidth.emplace();
    BandwidthSweep s;
    s.src = s.dst = "node0";
    BandwidthPoint p;
    p.bytes = 4096;
    p.samples = 8;
    p.median_us = p.min_us = p.p95_us = p.max_us = 1;
    p.gbps = 4.096;
    s.points.push_back(p);
    s.expected_gbps = 8;
    out.bandwidth->sweeps.push_back(s);
    out.collective.emplace();
    AllreduceSweep a;
    a.ranks = 2;
    AllreducePoint ap;
    ap.bytes = 8;
    ap.time_us = 30;
    a.points.push_back(ap);
    out.collective->allreduce.push_back(a);
    Finding f;
    f.id = "virt.p2p_missing";
    f.severity = Severity::warn;
    out.findings.push_back(f);
    return out;
  }();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace interprobe;
  const std::string text(reinterpret_cast<const char*>(data), size);
  policy::Policy parsed;
  try {
    parsed = policy::parse_policy(text, "policy.json");
  } catch (const InputError&) {
    return 0;
  }
  auto result = policy::check_report(parsed, sample_report());
  const auto& s = result.summary;
  fuzz::fuzz_require(static_cast<std::size_t>(s.pass + s.warn + s.fail + s.skipped) == result.items.size(),
                     "every item is counted once in the summary");
  fuzz::fuzz_require(result.items.size() == parsed.items.size(), "every item of the policy has a result");
  return 0;
}
