#include "calibration/environment/environment.hpp"
#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

std::string version_text() { return calibration::to_text(calibration::current_environment()); }

}  // namespace myriad::cli
