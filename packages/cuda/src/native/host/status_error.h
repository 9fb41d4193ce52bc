// The status-carrying exception of the host core and its macros, without CUDA: the host-only parts
// (the handle table, parameter validation) and their CPU tests use this; error.h adds CUDA's.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

#include "switchyard_cuda.h"

namespace sy {

class Error : public std::runtime_error {
 public:
  Error(int status, const std::string& message) : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

inline std::string where(const char* file, int line) {
  std::ostringstream s;
  const char* base = file;
  for (const char* c = file; *c; ++c) {
    if (*c == '/') base = c + 1;
  }
  s << base << ":" << line << ": ";
  return s.str();
}

}  // namespace sy

#define SY_THROW(status, msg)                                   \
  do {                                                          \
    std::ostringstream sy_msg_;                                 \
    sy_msg_ << sy::where(__FILE__, __LINE__) << msg;            \
    throw sy::Error((status), sy_msg_.str());                   \
  } while (0)

#define SY_REQUIRE(cond, msg)                          \
  do {                                                 \
    if (!(cond)) SY_THROW(SY_ERR_INVALID_ARGUMENT, msg); \
  } while (0)
