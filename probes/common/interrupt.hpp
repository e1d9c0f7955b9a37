#pragma once
// Ctrl-C: the first SIGINT asks the running measurement to stop at its next check, so the
// report keeps what was measured; a second one ends the process at once.
namespace interprobe {

void install_interrupt_handler();
bool interrupt_requested();
void request_interrupt();  // what the handler does; tests call it directly
void clear_interrupt();
// Throws InterruptedError when an interrupt is pending. Call it inside measurement loops.
void throw_if_interrupted();

}  // namespace interprobe
