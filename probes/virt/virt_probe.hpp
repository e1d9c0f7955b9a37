#pragma once
// The `virtualization` section: hypervisor and container in systemd-detect-virt's vocabulary
// (with systemd's precedence), product, machine type, Xen role, confidential guest, the evidence
// and its confidence, the GPU passthrough audit and the host's IOMMU settings.
#include <memory>

#include "probes/runner/probe.hpp"
#include "model/virt.hpp"

namespace interprobe {

class HostRoot;
class CpuidSource;

// Reads every signal through `root` and `cpuid`; never throws on malformed machine files (they
// become "warning: ..." evidence). Only a tree escaping its root (RootEscapeError) propagates.
report::VirtSection detect_virtualization(const HostRoot& root, const CpuidSource& cpuid);

std::unique_ptr<Probe> make_virt_probe();

}  // namespace interprobe
