#pragma once
// The NCCL backend: device buffers through the (statically linked) CUDA runtime, NCCL opened at
// run time through DynamicLibrary(VendorLibrary::nccl), never linked. In one process it drives
// every visible GPU (ncclCommInitAll); under mpirun one GPU per rank, chosen by the rank's place
// on its node, with the unique id broadcast over MPI. Only nccl_backend.cpp includes nccl.h.
#include <memory>
#include <string>

#include "probes/collective/collective_backend.hpp"
#include "probes/collective/rank_group.hpp"

namespace interprobe::collective {

bool nccl_compiled_in();
// CUDA devices this process sees; 0 with `why` set when none (no driver, no device, compiled out).
int visible_gpu_count(std::string* why);
// Throws UnsupportedError with the reason (compiled out, no GPU, NCCL not loadable, too few GPUs
// for the ranks on a node). Under MPI every rank learns when any rank cannot start.
std::unique_ptr<CollectiveBackend> make_nccl_backend(RankGroup& group);

}  // namespace interprobe::collective
