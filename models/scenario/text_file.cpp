#include "models/scenario/text_file.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

#include <climits>
#include <filesystem>

#include "models/scenario/interrupt.hpp"

namespace myriad::models::scenario {
namespace {

// A temporary file's name: "." + the file's name + this (mkstemp's pattern).
constexpr const char* kTempSuffix = ".XXXXXX";
constexpr std::size_t kTempExtra = 8;  // the dot and kTempSuffix

[[noreturn]] void refuse(const std::string& path, std::string_view what, const std::string& why) {
  throw std::runtime_error(fmt::format("{}: cannot read {}: {}", printable(path), what, why));
}

std::string size_text(std::size_t bytes) {
  return bytes >= (std::size_t{1} << 20) ? fmt::format("{} MiB", bytes >> 20)
                                         : fmt::format("{} KiB", bytes >> 10);
}

}  // namespace

std::string read_text_file(const std::string& path, std::string_view what, std::size_t limit) {
  // Opened without blocking, so that a FIFO with no writer cannot hang the
  // open, then checked on the descriptor itself (no race with a swapped path).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) refuse(path, what, std::strerror(errno));
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(::fdopen(fd, "rb"), &std::fclose);
  if (!file) {
    ::close(fd);
    refuse(path, what, std::strerror(errno));
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) refuse(path, what, std::strerror(errno));
  if (S_ISDIR(info.st_mode)) refuse(path, what, "it is a folder, not a file");
  if (!S_ISREG(info.st_mode)) {
    refuse(path, what,
           fmt::format("it is {}, not a regular file (one read while it is written could "
                       "wait for ever or never end): save it to a file first (a scenario "
                       "also reads standard input, given as -)",
                       S_ISFIFO(info.st_mode)   ? "a pipe (FIFO)"
                       : S_ISSOCK(info.st_mode) ? "a socket"
                                                : "a device"));
  }
  if (static_cast<std::size_t>(info.st_size) > limit) {
    refuse(path, what,
           fmt::format("{} bytes, more than the {} a {} may have", info.st_size, size_text(limit),
                       what));
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  // Read at most one byte past the limit: the file may grow while it is read.
  std::string text;
  text.reserve(static_cast<std::size_t>(info.st_size) + 1);  // one allocation, not doublings
  char buffer[1 << 16];
  while (text.size() <= limit) {
    const std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
    text.append(buffer, n);
    if (n < sizeof buffer) break;
  }
  if (std::ferror(file.get()) != 0) refuse(path, what, std::strerror(errno));
  if (text.size() > limit) {
    refuse(path, what, fmt::format("more than the {} a {} may have", size_text(limit), what));
  }
  return text;
}

std::string output_problem(const std::string& path, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target(path);
  // Read as standard output by habit; written here it would be a file named '-'.
  if (path == "-") {
    return "'-' is not standard output here (the report goes there already): give a file name";
  }
  if (fs::is_directory(target, ec)) return "it is a folder; give a file name";
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec)) {
    return fmt::format("its folder {} does not exist", printable(folder.string()));
  }
  if (::access(folder.c_str(), W_OK) != 0) {
    return fmt::format("its folder {} is not writable: {}", printable(folder.string()),
                       std::strerror(errno));
  }
  // The file is first written beside itself under a temporary name, longer by
  // kTempSuffix: both must fit the file system's limits.
  const long name_max = ::pathconf(folder.c_str(), _PC_NAME_MAX);
  const std::size_t name = target.filename().string().size() + kTempExtra;
  if (name_max > 0 && name > static_cast<std::size_t>(name_max)) {
    return fmt::format(
        "its name is {} bytes; this file system allows {}, and the temporary file written "
        "first beside it takes {} more: at most {}",
        name - kTempExtra, name_max, kTempExtra, static_cast<std::size_t>(name_max) - kTempExtra);
  }
  if (path.size() + kTempExtra >= PATH_MAX) {
    return fmt::format("the path is {} bytes, more than the {} the system allows", path.size(),
                       PATH_MAX - 1 - kTempExtra);
  }
  for (const auto& input : inputs) {
    if (input.empty()) continue;
    if (fs::exists(target, ec) && fs::equivalent(target, fs::path(input), ec)) {
      return fmt::format("it is the input {}: writing would destroy it", printable(input));
    }
  }
  return "";
}

bool write_all(int fd, std::string_view content) {
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void write_file_atomically(const std::string& path, std::string_view content,
                           std::string_view what) {
  namespace fs = std::filesystem;
  const auto refuse_write = [&](const std::string& why) {
    throw std::runtime_error(fmt::format("{}: cannot write {}: {}", printable(path), what, why));
  };
  // A link is followed: the file it names is replaced, not the link.
  std::error_code ec;
  fs::path target(path);
  if (fs::is_symlink(target, ec)) {
    const fs::path real = fs::weakly_canonical(target, ec);
    if (!ec) target = real;
  }
  // A device, pipe or socket (/dev/stdout, a FIFO) is written in place: there is
  // nothing to rename over it.
  struct stat info {};
  if (::stat(target.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    const int fd = ::open(target.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) refuse_write(std::strerror(errno));
    const bool ok = write_all(fd, content);
    const std::string why = std::strerror(errno);
    if (::close(fd) != 0 || !ok) refuse_write(ok ? std::strerror(errno) : why);
    return;
  }
  std::string temp;
  const int fd = create_temp_beside(target.string(), temp);
  PendingFile pending(fd >= 0 ? temp : std::string());
  const auto fail = [&](const std::string& why) {
    if (fd >= 0) ::unlink(temp.c_str());
    refuse_write(why);
  };
  if (fd < 0) fail(std::strerror(errno));
  if (!write_all(fd, content)) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    fail(why);
  }
  if (::fsync(fd) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    fail(why);
  }
  if (::close(fd) != 0) fail(std::strerror(errno));
  if (::rename(temp.c_str(), target.c_str()) != 0) fail(std::strerror(errno));
  pending.release();
}

int create_temp_beside(const std::string& path, std::string& temp) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  temp = (folder / ("." + target.filename().string() + kTempSuffix)).string();
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return fd;
  // The mode a new file would get (mkstemp makes it 0600).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0666 & ~mask) != 0) {
    const int error = errno;
    ::close(fd);
    ::unlink(temp.c_str());
    errno = error;
    return -1;
  }
  return fd;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace myriad::models::scenario
