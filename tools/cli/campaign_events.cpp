#include "tools/cli/campaign_events.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <system_error>

#include "models/scenario/text_file.hpp"
#include "tools/cli/csv.hpp"

namespace myriad::cli {
namespace {

using sim::campaign::CampaignEvent;

constexpr const char* kCsvHeader =
    "time_s,time_h,policy,seed,event,component,domain,id,first_node,node_count,interrupts,"
    "duration_s,lost_work_s,step,slowdown,detail\n";

std::string csv_line(const std::string& policy, int seed, const CampaignEvent& e) {
  const auto number = [](double x, bool present) {
    return present ? fmt::format("{}", x) : std::string();
  };
  return fmt::format(
      "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", e.time_s, e.time_s / 3600,
      csv_field(policy), seed, sim::campaign::event_name(e.kind), csv_field(e.component),
      csv_field(e.domain), e.id >= 0 ? std::to_string(e.id) : "",
      e.first_node >= 0 ? std::to_string(e.first_node) : "",
      e.node_count > 0 ? std::to_string(e.node_count) : "",
      e.kind == sim::campaign::EventKind::failure ? (e.interrupts ? "1" : "0") : "",
      number(e.duration_s, e.duration_s > 0),
      number(e.lost_work_s, e.kind == sim::campaign::EventKind::rollback),
      number(e.step, e.step >= 0), number(e.slowdown, e.slowdown > 0), csv_field(e.detail));
}

std::string json_line(const std::string& policy, int seed, const CampaignEvent& e) {
  nlohmann::ordered_json j;
  j["time_s"] = e.time_s;
  j["time_h"] = e.time_s / 3600;
  j["policy"] = policy;
  j["seed"] = seed;
  j["event"] = sim::campaign::event_name(e.kind);
  if (!e.component.empty()) j["component"] = e.component;
  if (!e.domain.empty()) j["domain"] = e.domain;
  if (e.id >= 0) j["id"] = e.id;
  if (e.first_node >= 0 && e.node_count > 0) {
    j["nodes"] = {e.first_node, e.first_node + e.node_count - 1};
  } else if (e.node_count > 0) {
    j["node_count"] = e.node_count;
  }
  if (e.kind == sim::campaign::EventKind::failure || e.kind == sim::campaign::EventKind::eviction) {
    j["interrupts"] = e.interrupts;
  }
  if (e.duration_s > 0) j["duration_s"] = e.duration_s;
  if (e.kind == sim::campaign::EventKind::rollback) j["lost_work_s"] = e.lost_work_s;
  if (e.step >= 0) j["step"] = e.step;
  if (e.slowdown > 0) j["slowdown"] = e.slowdown;
  if (!e.detail.empty()) j["detail"] = e.detail;
  // Policy names and details come from the user: invalid UTF-8 is replaced.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace

EventLogFile::EventLogFile(std::string path, sim::campaign::EventLevel level)
    : path_(std::move(path)), level_(level) {
  csv_ = std::filesystem::path(path_).extension() == ".csv";
  // A new file of its own beside the log (never a predictable name, never an
  // existing file or link), renamed over the log when complete; removed if the
  // run fails or is interrupted.
  const int fd = models::scenario::create_temp_beside(path_, partial_);
  if (fd >= 0) {
    pending_ = std::make_unique<models::scenario::PendingFile>(partial_);
    file_ = ::fdopen(fd, "wb");
    if (file_ == nullptr) {
      const int error = errno;
      ::close(fd);
      ::unlink(partial_.c_str());
      errno = error;
    }
  }
  if (file_ == nullptr) {
    throw std::runtime_error(fmt::format("{}: cannot write the event log: {}",
                                         models::scenario::printable(path_), std::strerror(errno)));
  }
  if (csv_ && std::fputs(kCsvHeader, file_) < 0) failed_ = true;
}

EventLogFile::~EventLogFile() {
  if (file_ != nullptr) {
    std::fclose(file_);
    std::error_code ignored;
    std::filesystem::remove(partial_, ignored);  // not finished: leave nothing half written
  }
}

void EventLogFile::write(const std::string& policy, int seed,
                         const sim::campaign::CampaignEvent& e) {
  if (!sim::campaign::logged_at(level_, e.kind)) {
    ++left_out_;
    return;
  }
  if (failed_) return;
  const std::string line = csv_ ? csv_line(policy, seed, e) : json_line(policy, seed, e);
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size()) {
    failed_ = true;
    write_errno_ = errno;
  }
  ++lines_;
}

void EventLogFile::finish() {
  const bool flushed = std::fflush(file_) == 0 && !failed_ && std::ferror(file_) == 0;
  const int error = write_errno_ != 0 ? write_errno_ : errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  std::error_code ec;
  if (!flushed || !closed) {
    std::filesystem::remove(partial_, ec);
    // fclose's own errno when the flush went well, else the flush's (a failed
    // write leaves its errno; one that set none is an I/O error).
    const int why = flushed ? errno : (error != 0 ? error : EIO);
    throw std::runtime_error(fmt::format("{}: cannot write the event log: {}",
                                         models::scenario::printable(path_), std::strerror(why)));
  }
  std::filesystem::rename(partial_, path_, ec);
  if (ec) {
    std::filesystem::remove(partial_, ec);
    throw std::runtime_error(
        fmt::format("{}: cannot write the event log: {}", path_, ec.message()));
  }
  pending_.reset();
}

std::string EventLogFile::summary() const {
  std::string out =
      fmt::format("campaign: event log {}: {} events", models::scenario::printable(path_), lines_);
  if (left_out_ > 0) {
    out += fmt::format("; {} checkpoint and upload events left out (--events-level all keeps them)",
                       left_out_);
  }
  return out + "\n";
}

}  // namespace myriad::cli
