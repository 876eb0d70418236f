#include "models/scenario/file_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "models/scenario/text_file.hpp"

namespace myriad::models::scenario {

std::string FileLock::lock_path(const std::string& path) {
  const std::filesystem::path target(path);
  return (target.parent_path() / ("." + target.filename().string() + ".lock")).string();
}

FileLock::FileLock(const std::string& path, double timeout_s) {
  const std::string lock = lock_path(path);
  const auto refuse = [&](const std::string& why) {
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error(fmt::format("{}: cannot lock it for writing ({}): {}", printable(path),
                                         printable(lock), why));
  };
  // O_NOFOLLOW: a link planted as the lock file is refused (ELOOP), not followed;
  // O_NONBLOCK: a FIFO planted there does not hang the open.
  fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    refuse(errno == ELOOP ? std::string("it is a symbolic link") : std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || !S_ISREG(info.st_mode)) refuse("it is not a regular file");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) refuse(std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      refuse(
          fmt::format("another process has held the lock for {:g} s (a concurrent `myriad "
                      "calibrate import`?): try again when it is done",
                      timeout_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace myriad::models::scenario
