#pragma once
// The parts of a priced batch (report::BatchEstimate) as the verdict and the what-ifs read them.
#include <string>

#include "report/analysis/bottleneck/step_pricing.hpp"
#include "report/analysis/workload/decode_step.hpp"
#include "model/report.hpp"

namespace interprobe::bottleneck {

// The report's view of a priced step: its counts, each part's time and provenance, the verdict.
report::BatchEstimate to_batch(const workload::DecodeStep& step, const StepEstimate& e);

// A part's time (0 when not priced), and the sums the levers talk about.
double category_us(const report::BatchEstimate& b, report::StepCategory c);
double communication_us(const report::BatchEstimate& b);
double gemm_us(const report::BatchEstimate& b);
report::Provenance category_provenance(const report::BatchEstimate& b, report::StepCategory c);

// A part in words, as the verdict and the what-ifs name it ("all-reduce latency").
std::string phrase(report::StepCategory c);

}  // namespace interprobe::bottleneck
