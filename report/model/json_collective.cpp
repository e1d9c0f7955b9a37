#include "report/model/collective.hpp"
#include "report/model/json_codec.hpp"

namespace interprobe::report::codec {

namespace {

json encode_point(const AllreducePoint& p) {
  return {{"bytes", p.bytes},           {"count", p.count},         {"dtype", p.dtype},
          {"in_place", p.in_place},     {"iterations", p.iterations}, {"samples", p.samples},
          {"time_us", p.time_us},       {"min_us", p.min_us},       {"max_us", p.max_us},
          {"algbw_gbps", p.algbw_gbps}, {"busbw_gbps", p.busbw_gbps}, {"wrong", p.wrong}};
}

AllreducePoint decode_point(const In& in) {
  AllreducePoint p;
  p.bytes = in.req<std::int64_t>("bytes");
  p.count = in.req<std::int64_t>("count");
  p.dtype = in.req<std::string>("dtype");
  p.in_place = in.req<bool>("in_place");
  p.iterations = in.opt<std::int64_t>("iterations").value_or(0);
  p.samples = in.opt<std::int64_t>("samples").value_or(0);
  p.time_us = in.req<double>("time_us");
  p.min_us = in.req<double>("min_us");
  p.max_us = in.req<double>("max_us");
  p.algbw_gbps = in.req<double>("algbw_gbps");
  p.busbw_gbps = in.req<double>("busbw_gbps");
  p.wrong = in.req<std::int64_t>("wrong");
  return p;
}

json encode_summary(const AllreduceSummary& s) {
  json j = json::object();
  put(j, "latency_bytes", s.latency_bytes);
  put(j, "latency_us", s.latency_us);
  put(j, "peak_busbw_gbps", s.peak_busbw_gbps);
  put(j, "plateau_busbw_gbps", s.plateau_busbw_gbps);
  put(j, "plateau_from_bytes", s.plateau_from_bytes);
  put(j, "half_plateau_bytes", s.half_plateau_bytes);
  j["wrong_total"] = s.wrong_total;
  return j;
}

AllreduceSummary decode_summary(const In& in) {
  AllreduceSummary s;
  s.latency_bytes = in.opt<std::int64_t>("latency_bytes");
  s.latency_us = in.opt<double>("latency_us");
  s.peak_busbw_gbps = in.opt<double>("peak_busbw_gbps");
  s.plateau_busbw_gbps = in.opt<double>("plateau_busbw_gbps");
  s.plateau_from_bytes = in.opt<std::int64_t>("plateau_from_bytes");
  s.half_plateau_bytes = in.opt<std::int64_t>("half_plateau_bytes");
  s.wrong_total = in.opt<std::int64_t>("wrong_total").value_or(0);
  return s;
}

json encode_sweep(const AllreduceSweep& s) {
  json j = {{"backend", s.backend},
            {"ranks", s.ranks},
            {"nodes", s.nodes},
            {"dtype", s.dtype},
            {"variant", s.variant},
            {"op", s.op},
            {"devices", s.devices},
            {"warmup_iterations", s.warmup_iterations},
            {"timeout_s", s.timeout_s},
            {"status", s.status},
            {"notes", s.notes},
            {"environment", s.environment}};
  put(j, "library_version", s.library_version);
  put(j, "reason", s.reason);
  put(j, "hung_at_bytes", s.hung_at_bytes);
  json transports = json::array();
  for (const auto& t : s.transports) transports.push_back({{"transport", t.transport}, {"connections", t.connections}});
  j["transports"] = transports;
  json algorithms = json::array();
  for (const auto& a : s.algorithms)
    algorithms.push_back({{"bytes", a.bytes}, {"algorithm", a.algorithm}, {"protocol", a.protocol}, {"calls", a.calls}});
  j["algorithms"] = algorithms;
  json points = json::array();
  for (const auto& p : s.points) points.push_back(encode_point(p));
  j["points"] = points;
  j["summary"] = encode_summary(s.summary);
  return j;
}

AllreduceSweep decode_sweep(const In& in) {
  AllreduceSweep s;
  s.backend = in.req<std::string>("backend");
  s.ranks = in.req<std::int64_t>("ranks");
  s.nodes = in.req<std::int64_t>("nodes");
  s.dtype = in.req<std::string>("dtype");
  s.variant = in.req<std::string>("variant");
  s.op = in.opt<std::string>("op").value_or("sum");
  s.library_version = in.opt<std::string>("library_version");
  s.devices = in.opt<std::vector<std::string>>("devices").value_or(std::vector<std::string>{});
  s.warmup_iterations = in.opt<std::int64_t>("warmup_iterations").value_or(0);
  s.timeout_s = in.opt<double>("timeout_s").value_or(0);
  s.status = in.req<std::string>("status");
  s.reason = in.opt<std::string>("reason");
  s.hung_at_bytes = in.opt<std::int64_t>("hung_at_bytes");
  s.notes = in.opt<std::vector<std::string>>("notes").value_or(std::vector<std::string>{});
  s.environment = in.opt<std::map<std::string, std::string>>("environment").value_or(std::map<std::string, std::string>{});
  for (const auto& t : in.opt_array("transports"))
    s.transports.push_back({t.req<std::string>("transport"), t.req<std::int64_t>("connections")});
  for (const auto& a : in.opt_array("algorithms"))
    s.algorithms.push_back({a.req<std::int64_t>("bytes"), a.req<std::string>("algorithm"), a.req<std::string>("protocol"),
                            a.opt<std::int64_t>("calls").value_or(0)});
  for (const auto& p : in.array("points")) s.points.push_back(decode_point(p));
  if (auto summary = in.opt_child("summary")) s.summary = decode_summary(*summary);
  return s;
}

}  // namespace

json encode_collective(const CollectiveSection& s) {
  json sweeps = json::array();
  for (const auto& sweep : s.allreduce) sweeps.push_back(encode_sweep(sweep));
  return {{"allreduce", sweeps}};
}

CollectiveSection decode_collective(const In& in) {
  CollectiveSection s;
  for (const auto& sweep : in.opt_array("allreduce")) s.allreduce.push_back(decode_sweep(sweep));
  return s;
}

}  // namespace interprobe::report::codec
