// The real Chakra traces in tests/data/chakra/ (its README says where each comes from).
#pragma once

#include <zlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "myriad_source_paths.hpp"

namespace myriad::sim::chakra::testing {

inline std::filesystem::path sample(const std::string& name) {
  return std::filesystem::path(MYRIAD_TEST_DATA_DIR).parent_path() / "data" / "chakra" / name;
}

inline std::string gunzip_file(const std::filesystem::path& path) {
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) throw std::runtime_error("cannot open " + path.string());
  std::string out;
  std::vector<char> buffer(1 << 16);
  int got = 0;
  while ((got = gzread(in, buffer.data(), static_cast<unsigned>(buffer.size()))) > 0) {
    out.append(buffer.data(), static_cast<std::size_t>(got));
  }
  gzclose(in);
  if (got < 0) throw std::runtime_error("cannot decompress " + path.string());
  return out;
}

}  // namespace myriad::sim::chakra::testing
