// The host compute engine of a build without OpenBLAS: it says how to get one.
#include "probes/compute/host_engine.hpp"

#include "common/errors.hpp"

namespace interprobe {

bool host_compute_available() { return false; }

std::string host_compute_missing_reason() {
  return "this interprobe was built without OpenBLAS: install libopenblas-dev (scripts/install-deps) and "
         "rebuild with -DINTERPROBE_WITH_OPENBLAS=AUTO or ON";
}

std::unique_ptr<ComputeEngine> make_host_compute_engine(const HostComputeOptions&) {
  throw UnsupportedError(host_compute_missing_reason());
}

}  // namespace interprobe
