// The page shell: Document sections as HTML (tables, key/value lists, paragraphs) with the figures
// placed above the sections they illustrate. Inline CSS only; nothing runs, nothing is fetched.
#include <fmt/format.h>

#include "report/render/html/html.hpp"

namespace interprobe::render::html {

namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;max-width:1400px;padding:0 16px 40px;color:#212529}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #dee2e6;padding-bottom:4px;margin-top:28px}
table{border-collapse:collapse;margin:8px 0 14px;font-size:13px}
th,td{border:1px solid #dee2e6;padding:3px 7px;text-align:left;vertical-align:top}
thead th{background:#f1f3f5}caption{text-align:left;font-style:italic;padding:2px 0;color:#495057}
td.r{text-align:right;font-variant-numeric:tabular-nums}
.good{color:#2b8a3e}.warn{color:#c77700}.bad{color:#c92a2a;font-weight:bold}.dim{color:#868e96}
.figure{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin:10px 0 18px}
.figure .tablebox{max-height:420px;overflow:auto;flex:1 1 360px}
.figure .notes{font-size:12px;color:#868e96;margin:2px 0}
svg.chart{background:#fff;border:1px solid #e9ecef;flex:0 0 auto}
svg.chart text{font:11px system-ui,sans-serif;fill:#343a40}svg.chart .ct{font-size:13px;font-weight:bold}
svg.chart .al{font-size:12px}svg.chart .small{font-size:10px}svg.chart .inv{fill:#fff}
svg.chart .axis line{stroke:#495057}svg.chart .axis line.grid{stroke:#e9ecef}
svg.chart .band{fill-opacity:.15;stroke:none}
.verdict{border-left:4px solid #1f6feb;background:#f1f6ff;padding:4px 12px;margin:10px 0}
.verdict p{margin:4px 0}.conf-low{color:#c77700}.conf-high{color:#2b8a3e}
)";

const char* tone_class(Tone t) {
  switch (t) {
    case Tone::good: return " class=\"good\"";
    case Tone::warn: return " class=\"warn\"";
    case Tone::bad: return " class=\"bad\"";
    case Tone::dim: return " class=\"dim\"";
    case Tone::plain: return "";
  }
  return "";
}

std::string table_html(const Table& t) {
  std::string out = "<table>";
  if (!t.caption.empty()) out += "<caption>" + html_escape(t.caption) + "</caption>";
  bool any_header = false;
  for (const auto& h : t.header) any_header = any_header || !h.empty();
  if (any_header) {
    out += "<thead><tr>";
    for (const auto& h : t.header) out += "<th scope=\"col\">" + html_escape(h) + "</th>";
    out += "</tr></thead>";
  }
  out += "<tbody>";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      bool right = c < t.align.size() && t.align[c] == Align::right;
      std::string cls = tone_class(row[c].tone);
      if (right) cls = cls.empty() ? " class=\"r\"" : cls.substr(0, cls.size() - 1) + " r\"";
      out += "<td" + cls + ">" + html_escape(row[c].text) + "</td>";
    }
    out += "</tr>";
  }
  return out + "</tbody></table>";
}

std::string figure_html(const Figure& f) {
  std::string out = f.lead;
  if (f.svg.empty()) return out;
  out += "<div class=\"figure\">" + f.svg + "<div class=\"tablebox\">" + f.table;
  for (const auto& n : f.notes) out += "<p class=\"notes\">" + html_escape(n) + "</p>";
  return out + "</div></div>";
}

}  // namespace

std::string section_html(const Section& s) {
  std::string out = "<section><h2>" + html_escape(s.title) + "</h2>";
  for (const auto& block : s.blocks) {
    if (const auto* kv = std::get_if<KeyValues>(&block)) {
      out += "<table class=\"kv\"><tbody>";
      for (const auto& [k, v] : kv->items)
        out += fmt::format("<tr><th scope=\"row\">{}</th><td{}>{}</td></tr>", html_escape(k), tone_class(v.tone), html_escape(v.text));
      out += "</tbody></table>";
    } else if (const auto* t = std::get_if<Table>(&block)) {
      out += table_html(*t);
    } else if (const auto* p = std::get_if<Paragraph>(&block)) {
      out += fmt::format("<p{}>{}</p>", tone_class(p->tone), html_escape(p->text));
    }
  }
  return out + "</section>\n";
}

std::string page(const Document& doc, const std::vector<Figure>& figures) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>" +
                    html_escape(doc.title) + "</title><style>" + kStyle + "</style></head><body>\n<h1>" + html_escape(doc.title) + "</h1>\n";
  std::vector<bool> placed(figures.size(), false);
  for (const auto& s : doc.sections) {
    std::string charts;
    for (std::size_t i = 0; i < figures.size(); ++i)
      if (!placed[i] && s.title.rfind(figures[i].section, 0) == 0) charts += figure_html(figures[i]), placed[i] = true;
    std::string body = section_html(s);
    // The charts open the section, under its heading.
    auto heading_end = body.find("</h2>") + 5;
    out += body.substr(0, heading_end) + charts + body.substr(heading_end);
  }
  for (std::size_t i = 0; i < figures.size(); ++i)
    if (!placed[i]) out += figure_html(figures[i]);
  return out + "</body></html>\n";
}

}  // namespace interprobe::render::html

namespace interprobe::render {

std::string render_html(const report::Report& report, const ViewOptions& views) {
  Document doc = build_document(report, views);
  doc.title = "interprobe report" + (report.host.hostname ? ": " + *report.host.hostname : std::string());
  std::vector<html::Figure> figures;
  for (auto* make : {&html::bottleneck_figures, &html::topology_figures, &html::bandwidth_figures, &html::collective_figures,
                     &html::compute_figures}) {
    auto more = make(report);
    figures.insert(figures.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return html::page(doc, figures);
}

}  // namespace interprobe::render
