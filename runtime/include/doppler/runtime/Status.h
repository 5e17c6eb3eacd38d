//===- Status.h - Error values for the runtime ------------------*- C++ -*-===//
//
// The runtime never throws and never aborts on bad input: every fallible call
// returns a Status (ok or a one-line message) or a Result<T> (a value or a
// message). Header-only and exception-free so that -fno-exceptions code (the
// MLIR side) can call the runtime.
//
//===----------------------------------------------------------------------===//
#ifndef DOPPLER_RUNTIME_STATUS_H
#define DOPPLER_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace doppler::runtime {

/// Success, or a failure with a human-readable message.
class [[nodiscard]] Status {
public:
  /// Success.
  Status() = default;

  static Status failure(std::string message) {
    Status status;
    // An empty message would read as success; keep failures recognisable.
    status.message_ = message.empty() ? "unknown error" : std::move(message);
    return status;
  }

  bool ok() const { return message_.empty(); }
  explicit operator bool() const { return ok(); }
  /// Empty on success.
  const std::string &message() const { return message_; }

  /// Prefixes the message with context ("task 5: ..."); no-op on success.
  Status withContext(const std::string &context) const {
    return ok() ? *this : failure(context + ": " + message_);
  }

private:
  std::string message_;
};

/// A value or the Status explaining why there is none.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T value) : value_(std::move(value)) {}
  /// `status` must be a failure.
  Result(Status status) : status_(std::move(status)) {
    assert(!status_.ok() && "a Result without a value needs an error");
    if (status_.ok())
      status_ = Status::failure("missing value");
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status &status() const { return status_; }
  /// Empty on success.
  const std::string &message() const { return status_.message(); }

  T &value() & { return *value_; }
  const T &value() const & { return *value_; }
  T &&value() && { return std::move(*value_); }
  T &operator*() & { return *value_; }
  const T &operator*() const & { return *value_; }
  T &&operator*() && { return std::move(*value_); }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace doppler::runtime

#endif // DOPPLER_RUNTIME_STATUS_H
