#pragma once
// Which CUDA major a libnccl was built for. NCCL compiles its version string in as a literal,
// "NCCL version 2.23.4+cuda12.6", so the file says it without loading or initialising anything.
#include <optional>
#include <string_view>
#include <string>

namespace interprobe {

// The X of the first "NCCL version <digits.digits.digits>...+cudaX.Y" in `bytes`; nullopt if none.
std::optional<int> nccl_cuda_major_in(std::string_view bytes);
// The same over a library file (memory-mapped, read sequentially); nullopt when it cannot be read.
std::optional<int> nccl_cuda_major_of_file(const std::string& path);

}  // namespace interprobe
