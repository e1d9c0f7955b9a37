#pragma once
// The neutral document every human-readable format is built from: sections of key/value
// lists, tables and paragraphs. Section views build it from the report; text, markdown (and
// later html) only lay it out. All text here is raw; each renderer escapes for its format.
#include <string>
#include <variant>
#include <vector>

#include "model/report.hpp"

namespace interprobe::render {

enum class Tone { plain, good, warn, bad, dim };
enum class Align { left, right };

struct Cell {
  std::string text;
  Tone tone = Tone::plain;
  Cell() = default;
  Cell(std::string t, Tone tn = Tone::plain) : text(std::move(t)), tone(tn) {}
  Cell(const char* t, Tone tn = Tone::plain) : text(t), tone(tn) {}
};

struct Table {
  std::string caption;
  std::vector<std::string> header;
  std::vector<Align> align;  // per column; missing columns align left
  std::vector<std::vector<Cell>> rows;
  // Rows of prose (findings): text lays each row out as a block, its first two cells on a lead
  // line and each further cell under it as "column: value", whatever the terminal's width.
  bool rows_as_blocks_in_text = false;
  std::size_t unwrapped_columns = 0;  // the first N columns never wrap in text (tree drawings)
};

struct KeyValues {
  std::vector<std::pair<std::string, Cell>> items;
  void add(std::string key, Cell value) { items.emplace_back(std::move(key), std::move(value)); }
};

struct Paragraph {
  std::string text;
  Tone tone = Tone::plain;
};

using Block = std::variant<KeyValues, Table, Paragraph>;

struct Section {
  std::string title;
  std::vector<Block> blocks;
};

struct Document {
  std::string title;
  std::vector<Section> sections;
};

// The parts of a report its writer constructed rather than measured, as fixtures and examples
// are ("the all-reduce sweep over 8 ranks"): a collective sweep noted "constructed", topology
// whose NVML reason says so. Empty for a report read from a machine.
std::vector<std::string> constructed_parts(const report::Report& r);

// Null-aware helpers for views.
std::string or_dash(const std::optional<std::string>& v);
std::string size_text(std::int64_t bytes);  // "4KiB"; "-" for a size the report does not have (negative)
Tone confidence_tone(report::Confidence c);
Cell status_cell(report::ProbeStatus s);
Cell severity_cell(report::Severity s);

// The whole report as a document: header, probes, findings, then one section per probe.
// Optional parts of views, switched on by subcommand options (`interprobe topo --tree`).
struct ViewOptions {
  bool topology_tree = false;  // the PCI tree, bridges -> devices, with current/max link
  bool all_library_details = false;  // --verbose: every vendor library's row, not only those missing or simulated
};

Document build_document(const report::Report& report, const ViewOptions& views = {});

// Section views: each in its own file, declared and called by build_document (document.cpp).
// One line on the NVML counters beside a sweep's measurements (telemetry_view.cpp): ranges over
// the points that have them ("sizes", "shapes"), or why none has; null when no point carries any.
std::optional<Paragraph> measurement_telemetry_line(const std::vector<const report::MeasurementTelemetry*>& points,
                                                    const char* what);
// A MoE workload's layout what-if: a row per layout and batch, then the collectives of each
// layout at its largest batch (layout_view.cpp).
std::vector<Table> layout_tables(const report::WorkloadEstimate& workload);

// What a grouped finding applies to, compact: "8: 0000:01:00.0 \u2026 0000:08:00.0".
std::string affected_summary(const std::vector<std::string>& affected);

}  // namespace interprobe::render
