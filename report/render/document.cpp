#include "report/render/document.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/text.hpp"
#include "common/units.hpp"

namespace interprobe::render {

std::string or_dash(const std::optional<std::string>& v) { return v ? *v : "-"; }
std::string size_text(std::int64_t bytes) { return bytes >= 0 ? format_size_label(static_cast<std::uint64_t>(bytes)) : "-"; }
Tone confidence_tone(report::Confidence c) {
  return c == report::Confidence::high ? Tone::good : c == report::Confidence::medium ? Tone::plain : Tone::warn;
}

std::vector<std::string> constructed_parts(const report::Report& r) {
  auto says = [](const std::string& text) { return text.find("constructed") != std::string::npos; };
  std::vector<std::string> parts;
  if (r.topology && r.topology->nvml_reason && says(*r.topology->nvml_reason))
    parts.push_back("the GPU peer-to-peer status");
  if (r.collective)
    for (const auto& s : r.collective->allreduce)
      if (std::any_of(s.notes.begin(), s.notes.end(), says))
        parts.push_back(fmt::format("the all-reduce sweep over {} ranks", s.ranks));
  if (r.telemetry && r.telemetry->trace && r.telemetry->trace->find("(source: fixture") != std::string::npos)
    parts.push_back("the GPU telemetry");
  return parts;
}

Cell status_cell(report::ProbeStatus s) {
  switch (s) {
    case report::ProbeStatus::ok: return {"ok", Tone::good};
    case report::ProbeStatus::unsupported: return {"unsupported", Tone::warn};
    case report::ProbeStatus::skipped: return {"skipped", Tone::dim};
    case report::ProbeStatus::failed: return {"failed", Tone::bad};
  }
  return {"?"};
}

Cell severity_cell(report::Severity s) {
  switch (s) {
    case report::Severity::info: return {"info", Tone::dim};
    case report::Severity::warn: return {"warn", Tone::warn};
    case report::Severity::fail: return {"FAIL", Tone::bad};
  }
  return {"?"};
}

namespace {

// Found libraries in one line of the header; a row each only for what needs a look (missing,
// simulated), or for every library with --verbose.
Table library_table(const report::ToolInfo& tool, const ViewOptions& views, KeyValues& header) {
  std::string found;
  for (const auto& [name, lib] : tool.libraries)
    if (lib.found && !lib.simulated) found += fmt::format("{}{} {}", found.empty() ? "" : ", ", name, or_dash(lib.version));
  if (!found.empty()) header.add("vendor libraries", found + (views.all_library_details ? "" : " (--verbose: paths)"));
  Table t{"vendor libraries", {"library", "status", "version", "detail"}, {}, {}};
  for (const auto& [name, lib] : tool.libraries) {
    if (!views.all_library_details && lib.found && !lib.simulated) continue;
    std::string detail = lib.reason ? *lib.reason : (lib.path ? *lib.path : "");
    if (lib.driver_version) detail = "driver " + *lib.driver_version + (detail.empty() ? "" : "; " + detail);
    std::string version = or_dash(lib.version);
    // Not asked from the library (it was not loaded): say which part of its file told it.
    if (const char* read_from = report::version_read_from_file(lib)) version += fmt::format(" ({})", read_from);
    if (lib.simulated) detail = "SIMULATED (" + *lib.simulated + "), not real hardware; " + detail;
    Cell status = lib.simulated ? Cell("simulated", Tone::warn)
                                : (lib.found ? Cell("found", Tone::good) : Cell("not found", Tone::warn));
    t.rows.push_back({Cell(name), status, Cell(version), Cell(detail, lib.reason ? Tone::dim : Tone::plain)});
  }
  return t;
}

// What the report was made from: a replayed telemetry trace (`observe --replay`) is named, since
// nothing of the machine it ran on was read.
Cell source_cell(const report::Report& r) {
  bool replayed_trace = r.telemetry && r.telemetry->source == report::TelemetrySource::replay && r.telemetry->trace;
  if (!r.host.live)
    return Cell("replayed tree " + r.host.root + (replayed_trace ? " (telemetry trace " + *r.telemetry->trace + ")" : ""), Tone::dim);
  if (replayed_trace) return Cell("replayed telemetry trace " + *r.telemetry->trace, Tone::dim);
  return Cell("live machine");
}

// A banner first in the header when parts were constructed: a reader must not take them for a
// machine's readings (the seed example is built from a published account).
std::optional<Paragraph> constructed_banner(const report::Report& r) {
  auto parts = constructed_parts(r);
  if (parts.empty()) return std::nullopt;
  std::string list;
  for (std::size_t i = 0; i < parts.size(); ++i)
    list += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return Paragraph{fmt::format("CONSTRUCTED, NOT MEASURED: {} in this report {} written from a published account (a "
                               "fixture or example), not read from a machine; every price drawn from them is labelled "
                               "assumed",
                               list, parts.size() == 1 ? "was" : "were"),
                   Tone::warn};
}

Section header_section(const report::Report& r, const ViewOptions& views) {
  Section s{"interprobe report", {}};
  if (auto banner = constructed_banner(r)) s.blocks.push_back(std::move(*banner));
  KeyValues kv;
  kv.add("host", or_dash(r.host.hostname));
  kv.add("kernel", or_dash(r.host.kernel));
  kv.add("source", source_cell(r));
  kv.add("started", r.host.started_at);
  kv.add("duration", fmt::format("{:.2f} s", r.host.duration_s));
  kv.add("interprobe", r.tool.version + " (schema " + r.schema_version + ")");
  std::string features;
  for (const auto& [name, on] : r.tool.features.list()) features += fmt::format("{}{}={}", features.empty() ? "" : " ", name, on ? "yes" : "no");
  kv.add("compiled in", features);
  Table libraries = library_table(r.tool, views, kv);
  s.blocks.push_back(std::move(kv));
  if (!libraries.rows.empty()) s.blocks.push_back(std::move(libraries));
  if (r.tool.libraries.empty() && r.tool.libraries_not_probed)
    s.blocks.push_back(Paragraph{"vendor libraries not probed: " + *r.tool.libraries_not_probed, Tone::dim});
  return s;
}

Section probes_section(const report::Report& r) {
  Section s{"probes", {}};
  Table t{"", {"probe", "status", "seconds", "reason"}, {Align::left, Align::left, Align::right, Align::left}, {}};
  for (const auto& p : r.probes)
    t.rows.push_back({Cell(p.name), status_cell(p.status), Cell(fmt::format("{:.3f}", p.duration_s)), Cell(or_dash(p.reason))});
  s.blocks.push_back(std::move(t));
  return s;
}

}  // namespace

// "0000:01:00.0"; "3: a, b, c"; "8: first … last": what a grouped finding applies to, short enough
// for one table cell whatever the count.
std::string affected_summary(const std::vector<std::string>& affected) {
  if (affected.empty()) return "";
  if (affected.size() == 1) return affected.front();
  if (affected.size() <= 3) {
    std::string out = fmt::format("{}:", affected.size());
    for (std::size_t i = 0; i < affected.size(); ++i) out += (i ? ", " : " ") + affected[i];
    return out;
  }
  return fmt::format("{}: {} \u2026 {}", affected.size(), affected.front(), affected.back());
}

namespace {

// A GPU named as an operator names it: "GPU3 NVIDIA H100 80GB HBM3 (0000:43:00.0)"; any other
// address as it is.
std::string device_label(const report::Report& r, const std::string& bdf) {
  if (!r.topology) return bdf;
  for (const auto& g : r.topology->gpus)
    if (g.bdf == bdf) return g.name ? fmt::format("GPU{} {} ({})", g.index, *g.name, bdf) : fmt::format("GPU{} ({})", g.index, bdf);
  return bdf;
}

// An evidence value that only repeats the affected list ("0000:18:00.0, 0000:19:00.0") says nothing new.
bool repeats_affected(const std::string& value, const std::vector<std::string>& affected) {
  if (affected.empty() || value.empty()) return false;
  std::size_t start = 0;
  while (start < value.size()) {
    std::size_t comma = value.find(',', start);
    std::string token(trim(std::string_view(value).substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (std::find(affected.begin(), affected.end(), token) == affected.end()) return false;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

Section findings_section(const report::Report& r) {
  Section s{"findings", {}};
  if (r.findings.empty()) {
    s.blocks.push_back(Paragraph{"no findings", Tone::good});
    return s;
  }
  Table t{"", {"severity", "finding", "id", "evidence", "what to do"}, {}, {}};
  t.rows_as_blocks_in_text = true;
  for (const auto& f : r.findings) {
    std::vector<std::string> named;
    for (const auto& bdf : f.affected) named.push_back(device_label(r, bdf));
    std::string evidence = f.affected.empty() ? "" : "affected " + affected_summary(named);
    for (const auto& [k, v] : f.evidence) {
      std::string text = report::value_to_text(v);
      if (repeats_affected(text, f.affected)) continue;
      evidence += fmt::format("{}{}={}", evidence.empty() ? "" : ", ", k, text);
    }
    t.rows.push_back({severity_cell(f.severity), Cell(f.title), Cell(f.id, Tone::dim), Cell(evidence, Tone::dim),
                      Cell(f.remedy)});
  }
  s.blocks.push_back(std::move(t));
  return s;
}

void add_system_view(const report::Report& r, Document& doc) {
  if (!r.system) return;
  const auto& sys = *r.system;
  Section s{"system", {}};
  KeyValues kv;
  kv.add("os", or_dash(sys.os_name));
  kv.add("kernel", or_dash(sys.kernel));
  kv.add("architecture", or_dash(sys.architecture));
  kv.add("cpu", or_dash(sys.cpu_model));
  kv.add("logical cpus", sys.logical_cpus ? std::to_string(*sys.logical_cpus) : "-");
  kv.add("memory", sys.memory_bytes ? format_bytes(static_cast<std::uint64_t>(*sys.memory_bytes)) : "-");
  kv.add("kernel cmdline", Cell(or_dash(sys.kernel_cmdline), Tone::dim));
  s.blocks.push_back(std::move(kv));
  doc.sections.push_back(std::move(s));
}

}  // namespace

// The section views, in the document's order; each adds nothing when its section is absent.
void add_topology_view(const report::Report& report, Document& doc, const ViewOptions& views);  // topology_view.cpp
void add_virtualization_view(const report::Report& report, Document& doc);  // virt_view.cpp
void add_collective_view(const report::Report& report, Document& doc);      // collective_view.cpp
void add_bandwidth_view(const report::Report& report, Document& doc);       // bandwidth_view.cpp
void add_compute_view(const report::Report& report, Document& doc);         // compute_view.cpp
void add_telemetry_view(const report::Report& report, Document& doc);       // telemetry_view.cpp
void add_verdict_view(const report::Report& report, Document& doc);         // bottleneck_view.cpp
void add_bottleneck_view(const report::Report& report, Document& doc);      // bottleneck_view.cpp

Document build_document(const report::Report& r, const ViewOptions& views) {
  Document doc;
  doc.title = "interprobe";
  doc.sections.push_back(header_section(r, views));
  add_verdict_view(r, doc);
  doc.sections.push_back(findings_section(r));
  add_system_view(r, doc);
  add_topology_view(r, doc, views);
  add_virtualization_view(r, doc);
  add_bandwidth_view(r, doc);
  add_collective_view(r, doc);
  add_compute_view(r, doc);
  add_telemetry_view(r, doc);
  add_bottleneck_view(r, doc);
  doc.sections.push_back(probes_section(r));
  return doc;
}

}  // namespace interprobe::render
