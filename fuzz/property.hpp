// A property a harness checks beyond "does not crash": when it fails, the
// harness says which and aborts, so that libFuzzer saves the input as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace myriad::fuzz {

// `what` names the property (the same for every input that breaks it: tools/fuzz.sh
// groups findings by it); `detail` shows the input and values.
inline void require(bool holds, const std::string& what, const std::string& detail) {
  if (holds) return;
  std::fprintf(stderr, "ERROR: property violated: %s\n%s\n", what.c_str(), detail.c_str());
  std::abort();
}

}  // namespace myriad::fuzz
