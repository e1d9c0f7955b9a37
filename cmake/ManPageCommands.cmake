# cmake -DINTERPROBE=BIN -DOUT=FILE -P ManPageCommands.cmake
# Writes a help2man include file with a COMMANDS section: every subcommand the binary lists under
# "Subcommands:" in its --help, with that subcommand's own --help, so the man page documents each
# command from the same text the tool prints.
set(ENV{COLUMNS} 100)
set(ENV{NO_COLOR} 1)
execute_process(COMMAND ${INTERPROBE} --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${INTERPROBE} --help exited ${rc}")
endif()

# roff: a backslash is \e; a line that starts with . or ' would be a request: \& before it.
function(roff_escape text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

string(REGEX MATCH "Subcommands:\n(.*)" _ "${top}")
set(listing "${CMAKE_MATCH_1}")
string(REPLACE "\n" ";" lines "${listing}")
set(body "[COMMANDS]\n")
set(count 0)
foreach(line IN LISTS lines)
  if(line MATCHES "^  ([a-z][a-z0-9-]*)  ")
    set(name ${CMAKE_MATCH_1})
    execute_process(COMMAND ${INTERPROBE} ${name} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "${INTERPROBE} ${name} --help exited ${rc}")
    endif()
    roff_escape("${help}" help)
    string(APPEND body ".SS ${name}\n.nf\n${help}.fi\n")
    math(EXPR count "${count} + 1")
  endif()
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "no subcommands found in `${INTERPROBE} --help` (looked under \"Subcommands:\")")
endif()
string(APPEND body "[EXIT STATUS]\n0 ok; 1 a finding at or above --fail-on (or a failed check);
2 usage or input error; 3 internal error; 4 the one probe asked for cannot run here (no GPU,
driver or library); 130 interrupted.\n")
string(APPEND body "[FILES]\n.TP\nPREFIX/share/interprobe/examples/\nmodel configs (--model) and check policies (--policy); PREFIX is /usr for the Debian package\n.TP\nPREFIX/lib/interprobe/interprobe-mpi.so\nthe MPI backend that allreduce --backend mpi and fleet open under mpirun\n")
file(WRITE ${OUT} "${body}")
