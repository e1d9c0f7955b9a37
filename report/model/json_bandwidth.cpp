#include "report/model/bandwidth.hpp"
#include "report/model/json_codec.hpp"

namespace interprobe::report::codec {

namespace {

json encode_point(const BandwidthPoint& p) {
  json j = {{"bytes", p.bytes},         {"samples", p.samples}, {"copies_per_sample", p.copies_per_sample},
            {"min_us", p.min_us},       {"median_us", p.median_us}, {"p95_us", p.p95_us},
            {"max_us", p.max_us},       {"cv", p.cv},           {"gbps", p.gbps}};
  put(j, "verified", p.verified);
  put(j, "stop_reason", p.stop_reason);
  put(j, "median_ci_low_us", p.median_ci_low_us);
  put(j, "median_ci_high_us", p.median_ci_high_us);
  j["copy_cpus"] = p.copy_cpus;
  return j;
}

BandwidthPoint decode_point(const In& in) {
  BandwidthPoint p;
  p.bytes = in.req<std::int64_t>("bytes");
  p.samples = in.req<std::int64_t>("samples");
  p.copies_per_sample = in.opt<std::int64_t>("copies_per_sample").value_or(1);
  p.min_us = in.req<double>("min_us");
  p.median_us = in.req<double>("median_us");
  p.p95_us = in.req<double>("p95_us");
  p.max_us = in.req<double>("max_us");
  p.cv = in.req<double>("cv");
  p.gbps = in.req<double>("gbps");
  p.verified = in.opt<bool>("verified");
  p.stop_reason = in.opt<std::string>("stop_reason");
  p.median_ci_low_us = in.opt<double>("median_ci_low_us");
  p.median_ci_high_us = in.opt<double>("median_ci_high_us");
  p.copy_cpus = in.opt<std::vector<std::int64_t>>("copy_cpus").value_or(std::vector<std::int64_t>{});
  return p;
}

json encode_fit(const BandwidthFit& f) {
  json j = {{"t0_us", f.t0_us}, {"peak_gbps", f.peak_gbps}, {"residual", f.residual}, {"points", f.points}};
  put(j, "n_half_bytes", f.n_half_bytes);
  return j;
}

BandwidthFit decode_fit(const In& in) {
  BandwidthFit f;
  f.t0_us = in.req<double>("t0_us");
  f.peak_gbps = in.req<double>("peak_gbps");
  f.n_half_bytes = in.opt<double>("n_half_bytes");
  f.residual = in.req<double>("residual");
  f.points = in.opt<std::int64_t>("points").value_or(0);
  return f;
}

json encode_sweep(const BandwidthSweep& s) {
  json j = {{"engine", s.engine}, {"kind", s.kind}, {"src", s.src}, {"dst", s.dst},
            {"directions", s.directions}, {"status", s.status}, {"notes", s.notes}};
  put(j, "memory", s.memory);
  put(j, "threads", s.threads);
  put(j, "reason", s.reason);
  json points = json::array();
  for (const auto& p : s.points) points.push_back(encode_point(p));
  j["points"] = points;
  if (s.fit) j["fit"] = encode_fit(*s.fit);
  else j["fit"] = nullptr;
  put(j, "expected_gbps", s.expected_gbps);
  put(j, "expected_basis", s.expected_basis);
  put(j, "pages", s.pages);
  json buffers = json::array();
  for (const auto& b : s.buffers) {
    json jb = {{"role", b.role}, {"bytes", b.bytes}};
    put(jb, "huge_page_bytes", b.huge_page_bytes);
    buffers.push_back(jb);
  }
  j["buffers"] = buffers;
  return j;
}

BandwidthSweep decode_sweep(const In& in) {
  BandwidthSweep s;
  s.engine = in.req<std::string>("engine");
  s.kind = in.req<std::string>("kind");
  s.src = in.req<std::string>("src");
  s.dst = in.req<std::string>("dst");
  s.memory = in.opt<std::string>("memory");
  s.threads = in.opt<std::int64_t>("threads");
  s.directions = in.opt<std::int64_t>("directions").value_or(1);
  s.status = in.opt<std::string>("status").value_or("complete");
  s.reason = in.opt<std::string>("reason");
  s.notes = in.opt<std::vector<std::string>>("notes").value_or(std::vector<std::string>{});
  for (const auto& p : in.array("points")) s.points.push_back(decode_point(p));
  if (auto f = in.opt_child("fit")) s.fit = decode_fit(*f);
  s.expected_gbps = in.opt<double>("expected_gbps");
  s.expected_basis = in.opt<std::string>("expected_basis");
  s.pages = in.opt<std::string>("pages");
  for (const auto& b : in.opt_array("buffers"))
    s.buffers.push_back({b.req<std::string>("role"), b.req<std::int64_t>("bytes"), b.opt<std::int64_t>("huge_page_bytes")});
  return s;
}

json encode_engine(const BandwidthEngineStatus& e) {
  json j = {{"engine", e.engine}, {"status", e.status}, {"notes", e.notes}};
  put(j, "reason", e.reason);
  return j;
}

BandwidthEngineStatus decode_engine(const In& in) {
  BandwidthEngineStatus e;
  e.engine = in.req<std::string>("engine");
  e.status = in.req<std::string>("status");
  e.reason = in.opt<std::string>("reason");
  e.notes = in.opt<std::vector<std::string>>("notes").value_or(std::vector<std::string>{});
  return e;
}

json encode_pair(const P2pPairTruth& p) {
  json j = {{"src", p.src}, {"dst", p.dst}, {"truth", p.truth}, {"peer_access_claimed", p.peer_access_claimed},
            {"reason", p.reason}};
  put(j, "p2p_gbps", p.p2p_gbps);
  put(j, "staged_gbps", p.staged_gbps);
  put(j, "p2p_latency_us", p.p2p_latency_us);
  put(j, "staged_latency_us", p.staged_latency_us);
  return j;
}

P2pPairTruth decode_pair(const In& in) {
  P2pPairTruth p;
  p.src = in.req<std::string>("src");
  p.dst = in.req<std::string>("dst");
  p.truth = in.req<std::string>("truth");
  p.peer_access_claimed = in.req<bool>("peer_access_claimed");
  p.reason = in.opt<std::string>("reason").value_or("");
  p.p2p_gbps = in.opt<double>("p2p_gbps");
  p.staged_gbps = in.opt<double>("staged_gbps");
  p.p2p_latency_us = in.opt<double>("p2p_latency_us");
  p.staged_latency_us = in.opt<double>("staged_latency_us");
  return p;
}

}  // namespace

json encode_bandwidth(const BandwidthSection& s) {
  json j = {{"plan", s.plan}, {"target_cv", s.target_cv}, {"passes", s.passes}};
  put(j, "thp_mode", s.thp_mode);
  json engines = json::array();
  for (const auto& e : s.engines) engines.push_back(encode_engine(e));
  j["engines"] = engines;
  json sweeps = json::array();
  for (const auto& sw : s.sweeps) sweeps.push_back(encode_sweep(sw));
  j["sweeps"] = sweeps;
  json pairs = json::array();
  for (const auto& p : s.p2p_pairs) pairs.push_back(encode_pair(p));
  j["p2p_pairs"] = pairs;
  return j;
}

BandwidthSection decode_bandwidth(const In& in) {
  BandwidthSection s;
  s.plan = in.req<std::string>("plan");
  s.target_cv = in.req<double>("target_cv");
  s.passes = in.opt<std::int64_t>("passes").value_or(1);
  s.thp_mode = in.opt<std::string>("thp_mode");
  for (const auto& e : in.opt_array("engines")) s.engines.push_back(decode_engine(e));
  for (const auto& sw : in.array("sweeps")) s.sweeps.push_back(decode_sweep(sw));
  for (const auto& p : in.opt_array("p2p_pairs")) s.p2p_pairs.push_back(decode_pair(p));
  return s;
}

}  // namespace interprobe::report::codec
