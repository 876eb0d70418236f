// Where a value of a scenario came from: a file position, or a built-in default.
#pragma once

#include <string>

namespace myriad::models::scenario {

struct Location {
  std::string file;  // path as the user gave it; "<default>" or "<derived>" for built-ins
  int line = 0;      // 1-based; 0 when not from a file
  int column = 0;    // 1-based; 0 when not from a file

  [[nodiscard]] bool in_file() const { return line > 0; }
  // "file:line:column" when in a file, else the file field alone.
  [[nodiscard]] std::string str() const {
    if (!in_file()) return file;
    return file + ":" + std::to_string(line) + ":" + std::to_string(column);
  }
};

inline Location default_location() { return Location{"<default>", 0, 0}; }
inline Location derived_location() { return Location{"<derived>", 0, 0}; }

}  // namespace myriad::models::scenario
