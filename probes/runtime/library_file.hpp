#pragma once
// What a vendor library's file says about it, without loading it: dlopen of libcublasLt (541 MB)
// only to ask its version cost every inventory command 200 MiB of RSS and a second and a half.
// The loader's search is followed by hand (LD_LIBRARY_PATH, /etc/ld.so.cache, the default
// directories), the SONAME comes from the ELF dynamic section, the version from the file name.
#include <optional>
#include <string>
#include <vector>

namespace interprobe {

// The file the dynamic loader would open for `name`: a name with a '/' is taken as it is;
// otherwise LD_LIBRARY_PATH, then /etc/ld.so.cache, then the default directories, keeping the
// first ELF shared object built for this machine's architecture. nullopt when there is none.
// (The calling object's DT_RUNPATH, which dlopen also honours, is not followed: interprobe has none.)
std::optional<std::string> find_library_file(const std::string& name);

// Paths /etc/ld.so.cache (glibc's "glibc-ld.so.cache1.1" format) lists for `name`, in its order.
// `cache` is the file's content; empty when it is in another format.
std::vector<std::string> ld_cache_lookup(const std::string& cache, const std::string& name);

// DT_SONAME of an ELF shared object of this machine's class and architecture; nullopt when the
// file is not one or has no SONAME. Reads the headers and the dynamic section only.
std::optional<std::string> read_elf_soname(const std::string& path);

// "2.28.9" from "libnccl.so.2.28.9", "2" from "libnccl.so.2"; nullopt when nothing follows ".so.".
std::optional<std::string> version_from_file_name(const std::string& file_name);

}  // namespace interprobe
