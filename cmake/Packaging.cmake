# What `cmake --install` puts on a machine, and the Debian package CPack builds from it.
#   bin/interprobe                       the tool
#   lib/interprobe/interprobe-mpi.so     the MPI backend (probes/collective/CMakeLists.txt installs it;
#                                        mpi_shim_loader.cpp looks there, relative to the binary)
#   share/man/man1/interprobe.1.gz       generated from --help by help2man, every subcommand's help included
#   share/interprobe/examples/           model configs and check policies the README's commands name
#   share/doc/interprobe/README.md
# `runtime` builds only what `interprobe run` needs (the binary, its MPI plugin, the man page): `make run`
# and `make package` use it.

add_custom_target(runtime)
# `cmake --install` and cpack install what `runtime` built, without building the tests first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)
add_dependencies(runtime interprobe)
if(TARGET interprobe-mpi)
  add_dependencies(runtime interprobe-mpi)
endif()

install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/models ${PROJECT_SOURCE_DIR}/examples/policies
        DESTINATION share/interprobe/examples)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/interprobe)
# Findings and help cite pages of docs/ and docs/reference.md §N: the pages travel with the tool.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs DESTINATION share/doc/interprobe FILES_MATCHING PATTERN "*.md")

# The man page is made from the binary's own help, so it cannot fall behind the options.
find_program(HELP2MAN help2man)
find_program(GZIP gzip)
if(HELP2MAN AND GZIP AND NOT CMAKE_CROSSCOMPILING)
  set(man_dir ${PROJECT_BINARY_DIR}/man)
  add_custom_command(
    OUTPUT ${man_dir}/interprobe.1.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
    COMMAND ${CMAKE_COMMAND} -DINTERPROBE=$<TARGET_FILE:interprobe> -DOUT=${man_dir}/commands.h2m
            -P ${PROJECT_SOURCE_DIR}/cmake/ManPageCommands.cmake
    # COLUMNS: help2man reads the help through a pipe; a fixed width keeps the page the same everywhere.
    COMMAND ${CMAKE_COMMAND} -E env COLUMNS=100 NO_COLOR=1
            ${HELP2MAN} --no-info --no-discard-stderr --section=1
            "--name=probes the interconnect of GPU servers and GPU VMs and tells what limits them"
            --include=${man_dir}/commands.h2m --output=${man_dir}/interprobe.1 $<TARGET_FILE:interprobe>
    COMMAND ${GZIP} -9nf ${man_dir}/interprobe.1
    DEPENDS interprobe ${PROJECT_SOURCE_DIR}/cmake/ManPageCommands.cmake
    COMMENT "man page interprobe.1 from --help (help2man)"
    VERBATIM)
  add_custom_target(man_page ALL DEPENDS ${man_dir}/interprobe.1.gz)
  add_dependencies(runtime man_page)
  install(FILES ${man_dir}/interprobe.1.gz DESTINATION share/man/man1)
  set(INTERPROBE_SUMMARY_MAN "yes (help2man)")
else()
  set(INTERPROBE_SUMMARY_MAN "no (apt-get install help2man)")
endif()

# The Debian package: `cpack -G DEB` in the build folder (scripts/package-check builds, installs and
# removes it). Depends are computed by dpkg-shlibdeps from what the binary and the plugin link, not
# typed here; the vendor libraries (driver, NVML, NCCL, cuBLASLt) are opened at run time and so are
# not dependencies: the package installs on a machine without a GPU, as the tool runs there.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME interprobe)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "interprobe developers <interprobe@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "probes the interconnect of GPU servers and GPU VMs and tells what limits them")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "interprobe reads PCIe/NVLink topology and peer-to-peer capability, detects the hypervisor and
container, sweeps host<->GPU, GPU<->GPU and collective bandwidth, measures compute, and ranks
communication against compute as the bottleneck of a planned workload.")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# mpirun starts `allreduce --backend mpi` and `fleet`; the tool runs without it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openmpi-bin")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
include(CPack)
