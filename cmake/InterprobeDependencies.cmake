# Optional dependencies: INTERPROBE_WITH_<NAME> = AUTO (use if found) | ON (required) | OFF.
# Each resolves INTERPROBE_HAVE_<NAME> (TRUE/FALSE) and INTERPROBE_HAVE_<NAME>_01 (1/0).

function(interprobe_tristate name doc)
  set(INTERPROBE_WITH_${name} AUTO CACHE STRING "${doc} (AUTO|ON|OFF)")
  set_property(CACHE INTERPROBE_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${INTERPROBE_WITH_${name}}" value)
  if(NOT value MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "INTERPROBE_WITH_${name}=${INTERPROBE_WITH_${name}}: use AUTO, ON or OFF")
  endif()
  set(INTERPROBE_WITH_${name}_MODE ${value} PARENT_SCOPE)
endfunction()

# Records the outcome; fails the configure when a required dependency is missing.
function(interprobe_resolve name found why)
  set(mode ${INTERPROBE_WITH_${name}_MODE})
  if(mode STREQUAL "OFF")
    set(have FALSE)
    set(note "disabled (-DINTERPROBE_WITH_${name}=OFF)")
  elseif(found)
    set(have TRUE)
    set(note "yes")
  elseif(mode STREQUAL "ON")
    message(FATAL_ERROR "INTERPROBE_WITH_${name}=ON but ${why}")
  else()
    set(have FALSE)
    set(note "no (${why})")
  endif()
  set(INTERPROBE_HAVE_${name} ${have} PARENT_SCOPE)
  if(have)
    set(INTERPROBE_HAVE_${name}_01 1 PARENT_SCOPE)
  else()
    set(INTERPROBE_HAVE_${name}_01 0 PARENT_SCOPE)
  endif()
  set(INTERPROBE_SUMMARY_${name} "${note}" PARENT_SCOPE)
endfunction()

interprobe_tristate(CUDA "check our CUDA driver / NCCL declarations against the toolkit's headers (nothing of CUDA is linked)")
interprobe_tristate(NCCL "NCCL all-reduce backend (loaded at run time; no header needed)")
interprobe_tristate(NVML "NVML telemetry and topology (loaded at run time; no header needed)")
interprobe_tristate(HWLOC "hwloc for CPUs, NUMA and XML topology")
interprobe_tristate(LIBPCI "libpci for the PCI inventory")
interprobe_tristate(MPI "MPI backend for collectives")
interprobe_tristate(OPENBLAS "OpenBLAS for the host compute engine (GEMM sweeps of interprobe compute)")
interprobe_tristate(PROMETHEUS "prometheus-cpp's text serializer for --format prometheus (core library only)")

find_package(PkgConfig QUIET)

# --- CUDA ---
# Nothing of CUDA or NCCL is linked or needed to build: the copy engine and the NCCL backend open
# libcuda / libnccl at run time through our own declarations of their ABI (probes/gpu,
# probes/collective/nccl_api.hpp), and the kernels are PTX text in the repo. INTERPROBE_WITH_CUDA
# now means checking those declarations against the toolkit's cuda.h (and nccl.h, when found) at
# build time (tests/unit/gpu): AUTO when the toolkit is there, ON requires it (a CI machine with
# the toolkit), OFF skips the check.
set(cuda_found FALSE)
set(cuda_why "CUDA toolkit headers not found (set CUDAToolkit_ROOT or install it under /usr/local/cuda)")
if(NOT INTERPROBE_WITH_CUDA_MODE STREQUAL "OFF")
  if(NOT DEFINED CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND AND EXISTS "${CUDAToolkit_INCLUDE_DIRS}/cuda.h")
    set(cuda_found TRUE)
  endif()
endif()
interprobe_resolve(CUDA ${cuda_found} "${cuda_why}")
if(INTERPROBE_HAVE_CUDA)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${NCCL_ROOT}/include ENV NCCL_ROOT)
endif()

# --- NCCL: our own declarations, loaded at run time ---
interprobe_resolve(NCCL TRUE "")

# --- NVML: our own declarations, loaded at run time ---
interprobe_resolve(NVML TRUE "")

# --- hwloc ---
set(hwloc_found FALSE)
if(PkgConfig_FOUND AND NOT INTERPROBE_WITH_HWLOC_MODE STREQUAL "OFF")
  pkg_check_modules(HWLOC QUIET IMPORTED_TARGET hwloc)
  set(hwloc_found ${HWLOC_FOUND})
endif()
interprobe_resolve(HWLOC "${hwloc_found}" "hwloc not found (apt-get install libhwloc-dev)")

# --- libpci ---
set(libpci_found FALSE)
if(PkgConfig_FOUND AND NOT INTERPROBE_WITH_LIBPCI_MODE STREQUAL "OFF")
  pkg_check_modules(LIBPCI QUIET IMPORTED_TARGET libpci)
  set(libpci_found ${LIBPCI_FOUND})
endif()
interprobe_resolve(LIBPCI "${libpci_found}" "libpci not found (apt-get install libpci-dev)")

# --- MPI ---
set(mpi_found FALSE)
if(NOT INTERPROBE_WITH_MPI_MODE STREQUAL "OFF")
  find_package(MPI QUIET COMPONENTS C)
  set(mpi_found ${MPI_C_FOUND})
endif()
interprobe_resolve(MPI "${mpi_found}" "MPI not found (apt-get install libopenmpi-dev openmpi-bin)")

# --- OpenBLAS (linked: the host compute engine's GEMMs) ---
set(openblas_found FALSE)
if(PkgConfig_FOUND AND NOT INTERPROBE_WITH_OPENBLAS_MODE STREQUAL "OFF")
  pkg_check_modules(OPENBLAS QUIET IMPORTED_TARGET openblas)
  set(openblas_found ${OPENBLAS_FOUND})
endif()
interprobe_resolve(OPENBLAS "${openblas_found}" "OpenBLAS not found (apt-get install libopenblas-dev)")

# --- prometheus-cpp (linked: core only, for its TextSerializer; no HTTP exposer at run time) ---
# Debian's package file also looks for civetweb, zlib and curl (the pull and push libraries it
# ships beside core); they are build-time only: the binary links prometheus-cpp::core alone.
set(prometheus_found FALSE)
if(NOT INTERPROBE_WITH_PROMETHEUS_MODE STREQUAL "OFF")
  find_package(prometheus-cpp CONFIG QUIET)
  if(TARGET prometheus-cpp::core)
    set(prometheus_found TRUE)
  endif()
endif()
interprobe_resolve(PROMETHEUS "${prometheus_found}" "prometheus-cpp not found (apt-get install prometheus-cpp-dev)")

# --- required ---
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(LibArchive QUIET)  # snapshots; optional so a bare GPU machine can rebuild

function(interprobe_print_summary)
  message(STATUS "interprobe ${PROJECT_VERSION} configuration:")
  foreach(name CUDA NCCL NVML HWLOC LIBPCI MPI OPENBLAS PROMETHEUS)
    message(STATUS "  ${name}: ${INTERPROBE_SUMMARY_${name}}")
  endforeach()
  message(STATUS "  man page: ${INTERPROBE_SUMMARY_MAN}")
  message(STATUS "  tests: ${INTERPROBE_BUILD_TESTS}  sanitizers: ${INTERPROBE_SANITIZE}  fuzz: ${INTERPROBE_FUZZ}")
endfunction()
