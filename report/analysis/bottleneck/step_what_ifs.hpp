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
