#include "report/model/json_codec.hpp"
#include "report/model/system.hpp"

namespace interprobe::report::codec {

json encode_system(const SystemSection& s) {
  json j = json::object();
  put(j, "os_name", s.os_name);
  put(j, "kernel", s.kernel);
  put(j, "architecture", s.architecture);
  put(j, "cpu_vendor", s.cpu_vendor);
  put(j, "cpu_model", s.cpu_model);
  put(j, "logical_cpus", s.logical_cpus);
  put(j, "memory_total_bytes", s.memory_total_bytes);
  put(j, "kernel_cmdline", s.kernel_cmdline);
  return j;
}

SystemSection decode_system(const In& in) {
  SystemSection s;
  s.os_name = in.opt<std::string>("os_name");
  s.kernel = in.opt<std::string>("kernel");
  s.architecture = in.opt<std::string>("architecture");
  s.cpu_vendor = in.opt<std::string>("cpu_vendor");
  s.cpu_model = in.opt<std::string>("cpu_model");
  s.logical_cpus = in.opt<std::int64_t>("logical_cpus");
  s.memory_total_bytes = in.opt<std::int64_t>("memory_total_bytes");
  s.kernel_cmdline = in.opt<std::string>("kernel_cmdline");
  return s;
}

}  // namespace interprobe::report::codec
