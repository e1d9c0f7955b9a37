#pragma once
// Ctrl-C and SIGTERM alike: the first asks the running measurement to stop at its next check,
// so the report keeps what was measured and the run exits 130; a second one ends the process
// at once. Should the run not end within kInterruptGraceSeconds of the first (a probe stuck
// inside a library that never returns to a check), the process exits 130 then; the report on
// disk is the last one saved between probes.
namespace interprobe {

inline constexpr unsigned kInterruptGraceSeconds = 30;

void install_interrupt_handler();
// 0: no grace period (wait for the run however long it takes). Tests shorten it.
void set_interrupt_grace_seconds(unsigned seconds);
bool interrupt_requested();
void request_interrupt();  // what the handler does; tests call it directly
void clear_interrupt();
// Throws InterruptedError when an interrupt is pending. Call it inside measurement loops.
void throw_if_interrupted();

}  // namespace interprobe
