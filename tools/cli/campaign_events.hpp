// `myriad campaign --events FILE`: the event log streamed to a file as the
// engine runs, one line an event: JSON Lines, or CSV when FILE ends in .csv.
// `--events-level` picks what is kept (sim/campaign/campaign_event.hpp:
// failures, the default, or all). It is written to a new temporary file beside FILE (.FILE.XXXXXX,
// created exclusively) and renamed over FILE when complete, so that a failed or interrupted run
// never leaves half a log under the name asked for, and two runs never write into one file.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "models/scenario/interrupt.hpp"

#include "sim/campaign/campaign_event.hpp"

namespace myriad::cli {

class EventLogFile {
 public:
  // Throws std::runtime_error "PATH: cannot write the event log: REASON".
  EventLogFile(std::string path, sim::campaign::EventLevel level);
  ~EventLogFile();
  EventLogFile(const EventLogFile&) = delete;
  EventLogFile& operator=(const EventLogFile&) = delete;

  // Writes `e` if the level keeps it, else counts it as left out.
  void write(const std::string& policy, int seed, const sim::campaign::CampaignEvent& e);
  // Flushes and renames into place; throws as the constructor does.
  void finish();
  [[nodiscard]] long lines() const { return lines_; }
  [[nodiscard]] long left_out() const { return left_out_; }
  // "campaign: event log PATH: N events[; M checkpoint and upload events left
  // out: --events-level all keeps them]\n", for stderr once finished.
  [[nodiscard]] std::string summary() const;

 private:
  std::string path_;
  std::string partial_;
  std::unique_ptr<models::scenario::PendingFile> pending_;  // removed on an interruption
  std::FILE* file_ = nullptr;
  sim::campaign::EventLevel level_;
  bool csv_ = false;
  bool failed_ = false;
  int write_errno_ = 0;  // why the first failed write failed
  long lines_ = 0;
  long left_out_ = 0;  // events the level leaves out
};

}  // namespace myriad::cli
