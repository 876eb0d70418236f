// An exclusive lock for a read-modify-write of a file (`calibrate import --append`):
// flock(2) on a sibling lock file, ".NAME.lock" in the file's folder, so that the
// lock holds while the file itself is replaced by a rename (write_file_atomically).
// The lock file is opened without following links (one planted there is refused)
// and is left in place: removing it would let a third writer lock a new file while
// a second still holds the old one.
#pragma once

#include <string>

namespace myriad::models::scenario {

class FileLock {
 public:
  // Takes the lock on `path`, waiting up to `timeout_s` for another holder to
  // finish. Throws std::runtime_error naming `path` and the lock file when it is
  // held longer, or cannot be opened.
  FileLock(const std::string& path, double timeout_s);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  // ".NAME.lock" beside `path`.
  static std::string lock_path(const std::string& path);

 private:
  int fd_ = -1;
};

}  // namespace myriad::models::scenario
