// Listings for `myriad explain presets` and `myriad explain profiles`.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace myriad::cli {

// Every hardware, cluster and model preset on the search path, each GPU with the
// device profile it takes (and whether it is borrowed or missing).
std::string presets_text(const std::vector<std::filesystem::path>& preset_path,
                         const std::filesystem::path& profile_dir);

// Every device profile in `profile_dir`: the GPU its rates were achieved on, how
// many were measured, published or assumed, and how it was made.
std::string profiles_text(const std::filesystem::path& profile_dir);

}  // namespace myriad::cli
