// A JSON file read whole (profiles, calibration rows, check reports): throws
// std::runtime_error naming the file and what it was meant to be when it cannot
// be read ("P: cannot read device profile: it is a folder, not a file"; limits in
// text_file.hpp) or is not JSON ("P: not valid JSON: ..."). What the document
// must hold is the caller's to check.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace myriad::models::scenario {

nlohmann::json read_json_file(const std::string& path, std::string_view what);

}  // namespace myriad::models::scenario
