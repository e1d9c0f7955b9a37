#pragma once

namespace interprobe::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;    // a finding at or above --fail-on
inline constexpr int kExitUsage = 2;          // usage or input error
inline constexpr int kExitInternal = 3;
inline constexpr int kExitUnsupported = 4;    // the one probe asked for cannot run here
inline constexpr int kExitInterrupted = 130;  // Ctrl-C; the report holds what was measured

}  // namespace interprobe::cli
