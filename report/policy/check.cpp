#include "report/policy/check.hpp"

#include <algorithm>
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/errors.hpp"
#include "model/metrics.hpp"
#include "report/policy/facts.hpp"
#include "report/policy/selector.hpp"

namespace interprobe::policy {

namespace {

constexpr std::size_t kListedSubjects = 5;  // failing subjects named in a line; the JSON has all

std::string number(double v) { return fmt::format("{:.4g}", v); }

std::string with_unit(double v, const std::string& unit) { return unit.empty() ? number(v) : number(v) + " " + unit; }


bool compare(double a, Op op, double b) {
  switch (op) {
    case Op::le: return a <= b;
    case Op::lt: return a < b;
    case Op::ge: return a >= b;
    case Op::gt: return a > b;
    case Op::eq: return a == b;
    case Op::ne: return a != b;
  }
  return false;
}

// Why a section has nothing to check: its probe did not run, or ran and said why not.
std::string not_measured(const report::Report& r, const std::string& section, const std::string& what) {
  if (section == "bottlenecks" && !r.bottlenecks)
    return what + ": the report has no bottleneck ranking (give --model and --tp, or check a report from `interprobe analyze`)";
  if (const report::ProbeRecord* p = r.probe(section); p && p->status != report::ProbeStatus::ok)
    return fmt::format("{}: the {} probe was {}{}", what, section, report::to_string(p->status),
                       p->reason ? ": " + *p->reason : "");
  if (section != "probes" && section != "bottlenecks" && !r.probe(section))
    return fmt::format("{}: the {} probe did not run for this report", what, section);
  return what + " in this report";
}

// Folds the subjects into the item's outcome, value and detail.
void conclude(ItemResult& res, std::size_t unmeasured, const std::string& reason) {
  const auto& s = res.subjects;
  if (s.empty()) {
    res.outcome = Outcome::skipped;
    res.value = "not measured";
    res.detail = reason;
    return;
  }
  std::size_t ok = std::count_if(s.begin(), s.end(), [](const SubjectResult& x) { return x.ok; });
  bool passed = res.item.quantifier == Quantifier::all ? ok == s.size() : ok > 0;
  res.outcome = passed ? Outcome::pass
                       : (res.item.severity == report::Severity::fail ? Outcome::fail : Outcome::warn);
  if (s.size() == 1) {
    res.value = s.front().value;
    if (res.item.of) res.threshold += " (" + s.front().threshold + ")";  // what the relative threshold came to
  } else {
    res.value = passed && res.item.quantifier == Quantifier::all ? fmt::format("all {} pass", s.size())
                                                                 : fmt::format("{} of {} pass", ok, s.size());
  }
  std::vector<std::string> bad;
  for (const auto& x : s)
    if (!x.ok && bad.size() < kListedSubjects) bad.push_back(fmt::format("{} = {}", x.subject, x.value));
  if (!passed && s.size() > 1)
    res.detail = fmt::format("failing: {}{}", fmt::join(bad, ", "), s.size() - ok > bad.size() ? ", ..." : "");
  if (unmeasured > 0)
    res.detail += fmt::format("{}{} not measured", res.detail.empty() ? "" : "; ", unmeasured);
}

void check_metric(const report::Report& r, ItemResult& res) {
  const Item& it = res.item;
  auto rows = report::metrics_of(r);
  std::map<std::string, const report::MetricRow*> by_path;
  for (const auto& row : rows) by_path[row.path] = &row;
  res.threshold = it.of ? fmt::format("{} {} x {}", to_string(it.op), number(it.factor), *it.of)
                        : fmt::format("{} {}", to_string(it.op), number(std::get<double>(it.value)));
  std::size_t unmeasured = 0;
  std::string missing_of;
  for (const auto& row : rows) {
    auto caps = match_glob(it.selector, row.path);
    if (!caps) continue;
    if (!it.of && res.subjects.empty())
      res.threshold = fmt::format("{} {}", to_string(it.op), with_unit(std::get<double>(it.value), row.unit));
    double limit = 0;
    if (it.of) {
      std::string other = substitute_captures(*it.of, *caps);
      auto found = by_path.find(other);
      if (found == by_path.end()) {
        ++unmeasured;
        if (missing_of.empty()) missing_of = other;
        continue;
      }
      limit = it.factor * found->second->value;
    } else {
      limit = std::get<double>(it.value);
    }
    res.subjects.push_back({row.path, with_unit(row.value, row.unit), with_unit(limit, row.unit), compare(row.value, it.op, limit)});
  }
  std::string reason = missing_of.empty()
                           ? not_measured(r, first_segment(it.selector), fmt::format("no metric matches {}", it.selector))
                           : not_measured(r, first_segment(missing_of), fmt::format("the threshold's metric {} is absent", missing_of));
  conclude(res, unmeasured, reason);
}

const char* kind_of(const Literal& v) {
  if (std::holds_alternative<double>(v)) return "a number";
  if (std::holds_alternative<bool>(v)) return "true/false";
  return "a word";
}

bool compare_literal(const Literal& fact, Op op, const Literal& want) {
  if (const double* a = std::get_if<double>(&fact)) return compare(*a, op, std::get<double>(want));
  bool equal = fact == want;
  return op == Op::eq ? equal : !equal;
}

void check_fact(const report::Report& r, const std::string& file, ItemResult& res) {
  const Item& it = res.item;
  res.threshold = fmt::format("{} {}", to_string(it.op), literal_text(it.value));
  for (const auto& row : facts_of(r)) {
    if (!match_glob(it.selector, row.path)) continue;
    if (row.value.index() != it.value.index())
      throw InputError(fmt::format("policy {}: item {} (id \"{}\"): key \"value\": {} is {}, the policy gives {}", file,
                                   it.index, it.id, row.path, kind_of(row.value), kind_of(it.value)));
    res.subjects.push_back({row.path, literal_text(row.value), res.threshold, compare_literal(row.value, it.op, it.value)});
  }
  conclude(res, 0, not_measured(r, first_segment(it.selector), fmt::format("no fact matches {}", it.selector)));
}

// A finding whose absence means nothing while another says the fact behind it was not read.
const report::Finding* unjudged_because(const report::Report& r, const std::string& selector) {
  static const std::map<std::string, std::string> not_read_when{{"virt.p2p_clique_missing", "virt.p2p_clique_unchecked"},
                                                                {"virt.p2p_cliques_split", "virt.p2p_clique_unchecked"}};
  for (const auto& [id, blocker] : not_read_when) {
    if (!match_glob(selector, id)) continue;
    for (const auto& f : r.findings)
      if (f.id == blocker) return &f;
  }
  return nullptr;
}

void check_finding(const report::Report& r, ItemResult& res) {
  const Item& it = res.item;
  res.threshold = to_string(it.expect);
  std::string probe = probe_of_finding(it.selector);
  const report::ProbeRecord* ran = probe.empty() ? nullptr : r.probe(probe);
  if (!probe.empty() && (!ran || ran->status != report::ProbeStatus::ok)) {
    conclude(res, 0, not_measured(r, probe, fmt::format("{} cannot be judged", it.selector)));
    return;
  }
  std::vector<std::string> found;
  for (const auto& f : r.findings)
    if (match_glob(it.selector, f.id)) found.push_back(fmt::format("{} ({}: {})", f.id, report::to_string(f.severity), f.title));
  const report::Finding* blocker = found.empty() ? unjudged_because(r, it.selector) : nullptr;
  if (blocker) {
    conclude(res, 0, fmt::format("{} cannot be judged: {} ({})", it.selector, blocker->title, blocker->id));
    return;
  }
  bool ok = it.expect == Expect::absent ? found.empty() : !found.empty();
  res.subjects.push_back({it.selector, found.empty() ? "absent" : "present", res.threshold, ok});
  conclude(res, 0, "");
  if (!found.empty()) res.detail = fmt::format("{}", fmt::join(found, "; "));
}

void check_bottleneck(const report::Report& r, ItemResult& res) {
  const Item& it = res.item;
  const std::string& word = std::get<std::string>(it.value);
  res.threshold = fmt::format("{} {} at batch {}{}", to_string(it.op), word, *it.batch, it.tp ? fmt::format(", TP {}", *it.tp) : "");
  std::size_t unmeasured = 0;
  if (r.bottlenecks)
    for (const auto& w : r.bottlenecks->workloads) {
      std::string model = w.model;
      std::replace(model.begin(), model.end(), '/', '_');
      if (!match_glob(it.selector, model) || (it.tp && w.tp != *it.tp)) continue;
      auto batch = std::find_if(w.batches.begin(), w.batches.end(), [&](const report::BatchEstimate& b) { return b.batch == *it.batch; });
      if (batch == w.batches.end() || !batch->bottleneck) {
        ++unmeasured;
        continue;
      }
      std::string category = report::to_string(*batch->bottleneck);
      bool is = category == word || category.rfind(word + "_", 0) == 0;
      res.subjects.push_back({fmt::format("{} tp{} b{}", w.model, w.tp, batch->batch), category, res.threshold,
                              it.op == Op::eq ? is : !is});
    }
  conclude(res, unmeasured, not_measured(r, "bottlenecks", fmt::format("no workload matches model {} at batch {}", it.selector, *it.batch)));
}

}  // namespace

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::pass: return "pass";
    case Outcome::warn: return "warn";
    case Outcome::fail: return "fail";
    case Outcome::skipped: return "skipped";
  }
  return "skipped";
}

CheckResult check_report(const Policy& policy, const report::Report& r) {
  CheckResult out{policy.name, policy.file, {}, {}};
  for (const auto& it : policy.items) {
    ItemResult res;
    res.item = it;
    switch (it.kind) {
      case ItemKind::metric: check_metric(r, res); break;
      case ItemKind::fact: check_fact(r, policy.file, res); break;
      case ItemKind::finding: check_finding(r, res); break;
      case ItemKind::bottleneck: check_bottleneck(r, res); break;
      case ItemKind::fleet:
        res.detail = "a fleet item: judged over a fleet report (`interprobe fleet -o FILE`), not one machine's";
        break;
    }
    switch (res.outcome) {
      case Outcome::pass: ++out.summary.pass; break;
      case Outcome::warn: ++out.summary.warn; break;
      case Outcome::fail: ++out.summary.fail; break;
      case Outcome::skipped: ++out.summary.skipped; break;
    }
    out.items.push_back(std::move(res));
  }
  return out;
}

void fail_unmeasured_gates(CheckResult& result, bool warn_gates) {
  for (auto& r : result.items) {
    bool gates = r.item.severity == report::Severity::fail || (warn_gates && r.item.severity == report::Severity::warn);
    if (r.outcome != Outcome::skipped || !gates) continue;
    r.outcome = r.item.severity == report::Severity::fail ? Outcome::fail : Outcome::warn;
    r.detail = "not measured, and --strict fails a gate that read nothing: " + r.detail;
    --result.summary.skipped;
    ++(r.outcome == Outcome::fail ? result.summary.fail : result.summary.warn);
  }
}

bool check_failed(const CheckResult& result, bool warn_gates) {
  return result.summary.fail > 0 || (warn_gates && result.summary.warn > 0);
}

}  // namespace interprobe::policy
