#pragma once
// What-ifs on a priced batch: the step priced again with one change (a part removed, half the TP,
// P2P on, CUDA graphs), each with the provenance of the prices it used and a note saying how.
#include <optional>
#include <string>
#include <vector>

#include "report/analysis/bottleneck/analyze.hpp"
#include "report/analysis/bottleneck/assumed_specs.hpp"
#include "report/analysis/bottleneck/report_prices.hpp"
#include "report/analysis/bottleneck/step_pricing.hpp"
#include "model/report.hpp"

namespace interprobe::bottleneck {

// What every what-if reads: the report, the workload, the prices the step was priced from (the
// report's own, or an assumed target's), the report's measured prices and the target.
struct WhatIfContext {
  const report::Report& report;
  const WorkloadRequest& request;
  const PriceSource& prices;
  const ReportPrices& measured;
  const std::optional<AssumedTarget>& target;
  bool report_gpus_priced = true;  // false when --assume prices a GPU the report did not measure
};

// A named change to a priced batch: `apply` prices the step again with the change (through
// price_step and a PriceSource that changes one price) and appends what it found, or why it could
// not, or nothing where the change does not apply. The verdict's what-ifs are this list, in order.
struct StepScenario {
  const char* name;
  void (*apply)(const WhatIfContext& context, const report::BatchEstimate& batch, std::vector<report::WhatIf>& out);
};
const std::vector<StepScenario>& step_scenarios();

// Removing each of the two largest costs: an upper bound on what its lever can give.
void removal_what_ifs(const report::BatchEstimate& b, std::vector<report::WhatIf>& out);

// Half the TP, priced only from an all-reduce measured at that rank count and when the weights fit.
void lower_tp_what_if(const report::Report& r, const WorkloadRequest& rq, const PriceSource& prices,
                      const report::BatchEstimate& b, std::vector<report::WhatIf>& out);

// P2P on, where the measured all-reduces ran without it (published P2P-on numbers, assumed).
void p2p_on_what_if(const report::Report& r, const WorkloadRequest& rq, const PriceSource& prices,
                    const report::BatchEstimate& b, std::vector<report::WhatIf>& out);

// CUDA graphs: the step's kernels at the graph's per-kernel cost (measured, or assumed for an eager target).
void cuda_graphs_what_if(const ReportPrices& measured, const std::optional<AssumedTarget>& target,
                         const WorkloadRequest& rq, const PriceSource& prices, const report::BatchEstimate& b,
                         std::vector<report::WhatIf>& out);

}  // namespace interprobe::bottleneck
