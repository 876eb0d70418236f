// `myriad campaign` with training.growth: each policy's days for the small
// model's training, then the grown model's, against the campaign without growth.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sim/campaign/campaign_report.hpp"
#include "sim/planning/growth.hpp"

namespace myriad::cli {

std::string growth_text(const sim::GrowthPhase& g, const sim::campaign::CampaignReport& small,
                        const sim::campaign::CampaignReport& grown,
                        const sim::campaign::CampaignReport& without);
nlohmann::json growth_json(const sim::GrowthPhase& g, const sim::campaign::CampaignReport& small,
                           const sim::campaign::CampaignReport& grown,
                           const sim::campaign::CampaignReport& without);

}  // namespace myriad::cli
