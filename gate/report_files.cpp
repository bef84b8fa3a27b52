#include "gate/report.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>

#include "base/errors.h"
#include "tensorio/readers.h"

namespace ropecheck::gate {

namespace {
void check_output_path(const std::string& path, const std::vector<std::string>& inputs);

// The folder a report file goes into ("." for a bare file name).
std::filesystem::path folder_of(const std::string& path) {
  const std::filesystem::path target(path);
  return target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
}
}  // namespace

void check_report_paths(const std::vector<std::string>& paths, const std::vector<std::string>& inputs) {
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (paths[i].empty()) continue;
    for (std::size_t k = i + 1; k < paths.size(); ++k) {
      if (paths[k] == paths[i]) throw UsageError(paths[i] + ": report path: expected a different file for each report");
    }
    check_output_path(paths[i], inputs);
    const std::filesystem::path folder = folder_of(paths[i]);
    std::error_code ec;
    if (!std::filesystem::is_directory(folder, ec) || ::access(folder.c_str(), W_OK | X_OK) != 0) {
      throw InputError(paths[i] + ": file: expected a writable folder " + folder.string());
    }
  }
}

void emit_reports(const Report& report, const std::string& json_path, const std::string& junit_path,
                  const std::string& html_path, const std::vector<std::string>& inputs, TextForm text) {
  check_report_paths({json_path, junit_path, html_path}, inputs);
  // Every report is rendered before anything is written or printed: a failure leaves no half.
  const std::string json = json_path.empty() ? "" : to_json(report);
  const std::string junit = junit_path.empty() ? "" : to_junit(report);
  const std::string html = html_path.empty() ? "" : to_html(report);
  const std::string printed = text == TextForm::explanation ? format_explanation(report)
                              : text == TextForm::table     ? format_table(report)
                                                            : format_summary(report);
  std::fputs(printed.c_str(), stdout);
  std::fflush(stdout);
  if (!json_path.empty()) write_atomically(json_path, json, inputs);
  if (!junit_path.empty()) write_atomically(junit_path, junit, inputs);
  if (!html_path.empty()) write_atomically(html_path, html, inputs);
}

namespace {

// What is at `path` now, when it may not be replaced: a report replaces a regular file only, never
// a device (`--json /dev/null` run as root), a FIFO, a socket, a folder or a symbolic link. lstat:
// the final component itself, not what a link points to.
void refuse_existing_non_regular(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;
  if (S_ISDIR(st.st_mode)) throw UsageError(path + ": report path: expected a file name, got a folder");
  throw UsageError(path + ": report path: expected a regular file or a new name, got " + tensorio::file_kind(st.st_mode) +
                   " (never replaced)");
}

void check_output_path(const std::string& path, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  refuse_existing_non_regular(path);
  std::error_code ec;
  const fs::path target(path);
  for (const std::string& input : inputs) {
    if (input.empty()) continue;
    const bool same = fs::exists(target, ec) && fs::exists(input, ec) ? fs::equivalent(target, input, ec)
                                                                      : fs::weakly_canonical(target, ec) == fs::weakly_canonical(input, ec);
    if (same) throw UsageError(path + ": report path: expected a file that is not an input (it is " + input + ")");
    // A *.json file in a --golden folder would be read as a suite by the next run.
    if (target.extension() == ".json" && fs::is_directory(input, ec) && fs::equivalent(folder_of(path), input, ec)) {
      throw UsageError(path + ": report path: expected a file outside the golden folder " + input +
                       " (its *.json files are read as suites)");
    }
  }
}

// An unnamed file in `folder` (O_TMPFILE), or a named one where the filesystem has none; `temp`
// is then its name.
int open_temporary(const std::filesystem::path& folder, const std::string& file_name, std::string& temp) {
  const int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
  temp = (folder / ("." + file_name + ".tmp.XXXXXX")).string();
  return ::mkstemp(temp.data());
}

// Gives the unnamed file `fd` the name `temp` (a fresh one beside the target).
bool name_temporary(int fd, const std::filesystem::path& folder, const std::string& file_name, std::string& temp) {
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  for (unsigned attempt = 0; attempt < 100; ++attempt) {
    temp = (folder / ("." + file_name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(attempt))).string();
    if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) == 0) return true;
    if (errno == EEXIST) continue;
    // Without /proc: the same through AT_EMPTY_PATH (needs CAP_DAC_READ_SEARCH).
    if (::linkat(fd, "", AT_FDCWD, temp.c_str(), AT_EMPTY_PATH) == 0) return true;
    if (errno != EEXIST) return false;
  }
  return false;
}

}  // namespace

void write_atomically(const std::string& path, const std::string& content, const std::vector<std::string>& inputs,
                      bool exclusive) {
  write_atomically_streamed(path, inputs, [&](const ChunkWriter& write) { write(content); }, exclusive);
}

void write_atomically_streamed(const std::string& path, const std::vector<std::string>& inputs,
                               const std::function<void(const ChunkWriter&)>& produce, bool exclusive) {
  namespace fs = std::filesystem;
  check_output_path(path, inputs);
  const fs::path target(path);
  const fs::path folder = folder_of(path);
  const std::string file_name = target.filename().string();
  // Written unnamed where the filesystem allows (O_TMPFILE): a run killed while writing leaves no
  // temporary file behind; it is named only for the rename into place.
  std::string temp;
  const int fd = open_temporary(folder, file_name, temp);
  if (fd < 0) throw InputError(path + ": file: expected a writable folder " + folder.string());
  auto discard = [&] {
    if (!temp.empty()) ::unlink(temp.c_str());
  };
  std::uint64_t total = 0;
  bool short_write = false;
  const ChunkWriter write = [&](std::string_view chunk) {
    std::size_t written = 0;
    while (written < chunk.size() && !short_write) {
      const ssize_t n = ::write(fd, chunk.data() + written, chunk.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) short_write = true;
      else written += static_cast<std::size_t>(n);
    }
    total += written;
  };
  try {
    produce(write);
  } catch (...) {
    ::close(fd);
    discard();
    throw;
  }
  const bool ok = !short_write && ::fchmod(fd, 0644) == 0 && ::fsync(fd) == 0;
  const bool named = ok && (!temp.empty() || name_temporary(fd, folder, file_name, temp));
  ::close(fd);
  if (!named) {
    discard();
    throw InputError(path + ": file: expected " +
                     (ok ? std::string("a temporary name in ") + folder.string()
                         : "every byte written (" + std::to_string(total) + " written before an error; disk full?)"));
  }
  try {
    refuse_existing_non_regular(path);  // again: what is there may have changed while writing
  } catch (...) {
    discard();
    throw;
  }
  if (exclusive) {
    // link() fails on an existing name where rename() would replace it.
    const int linked = ::link(temp.c_str(), path.c_str());
    const int error = errno;
    discard();
    if (linked != 0) {
      throw InputError(path + (error == EEXIST ? ": file: expected a new file, got one created while this one was written"
                                               : ": file: expected to put the file in place (" + std::string(std::strerror(error)) + ")"));
    }
    return;
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    discard();
    throw InputError(path + ": file: expected to rename the temporary file into place");
  }
}

}  // namespace ropecheck::gate
