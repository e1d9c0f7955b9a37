# The README's two commands:
#   make run    installs what is missing, builds Release, runs `interprobe run` on this machine
#   make test   installs what is missing, builds, runs every test (output on failure)
# Variables: BUILD (build dir), CUDA=AUTO|ON|OFF, JOBS, UNITY=ON|OFF (batched compilation, CMakeLists.txt).
BUILD ?= build
CUDA ?= AUTO
UNITY ?= ON
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
# ccache (Debian package, installed by `scripts/install-deps --test`) when present: CI's three
# builds share one cache outside the clone (.ci/run sets CCACHE_BASEDIR to the clone).
CCACHE := $(shell command -v ccache 2>/dev/null)
ifneq ($(CCACHE),)
CMAKE_FLAGS += -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache
endif

.PHONY: run test build build-runtime configure deps deps-test package clean

# `run` builds only the binary and its MPI plugin (target `runtime`), not the tests.
run: deps build-runtime
	./$(BUILD)/cli/interprobe run

test: deps-test build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

configure:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DINTERPROBE_WITH_CUDA=$(CUDA) -DINTERPROBE_UNITY_BUILD=$(UNITY) $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

build-runtime: configure
	cmake --build $(BUILD) -j $(JOBS) --target runtime

# The Debian package (interprobe_VERSION_ARCH.deb in $(BUILD)/package), dependencies from dpkg-shlibdeps.
package: deps-test build-runtime
	cmake --build $(BUILD) -j $(JOBS) --target man_page
	cd $(BUILD) && cpack -G DEB -B "$$PWD/package"

deps:
	scripts/install-deps

deps-test:
	scripts/install-deps --test

clean:
	rm -rf $(BUILD)
