// The readers behind import_rows and import_file (import.hpp), one a format, each
// reading a stream to its end and keeping only what becomes rows.
#pragma once

#include <istream>
#include <string>

#include "calibration/import/import.hpp"

namespace myriad::calibration {

// Throws std::runtime_error "PATH: WHERE: WHAT".
[[noreturn]] void import_fail(const std::string& path, const std::string& where,
                              const std::string& what);

Imported import_nccl_tests(std::istream& in, const std::string& path, const ImportOptions& o);
Imported import_google_benchmark(std::istream& in, const std::string& path, const ImportOptions& o);
Imported import_kineto(std::istream& in, const std::string& path);
Imported import_xla_gemm_table(std::istream& in, const std::string& path, const ImportOptions& o);

}  // namespace myriad::calibration
