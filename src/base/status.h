#pragma once
// Status and Result<T>: the core's error channel. Exceptions appear only at the CLI edge.
#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace tuneprof {

enum class StatusCode {
  kOk,
  kInvalidInput,  // the user's file is not what it should be
  kNotFound,      // a path does not exist
  kUnsupported,   // a recognised format that this build does not read yet
  kIoError,       // the OS refused a read
  kUsage,         // the command line itself is wrong
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status InvalidInput(std::string message) { return Status(StatusCode::kInvalidInput, std::move(message)); }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : value_(std::move(status)) { assert(!std::get<Status>(value_).ok()); }  // NOLINT

  bool ok() const { return std::holds_alternative<T>(value_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(value_);
  }
  T& value() & { return std::get<T>(value_); }
  const T& value() const& { return std::get<T>(value_); }
  T&& value() && { return std::get<T>(std::move(value_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  std::variant<T, Status> value_;
};

}  // namespace tuneprof

#define TP_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::tuneprof::Status tp_status_ = (expr);  \
    if (!tp_status_.ok()) return tp_status_; \
  } while (0)

#define TP_CONCAT_INNER(a, b) a##b
#define TP_CONCAT(a, b) TP_CONCAT_INNER(a, b)
#define TP_ASSIGN_OR_RETURN(lhs, expr) TP_ASSIGN_OR_RETURN_IMPL(TP_CONCAT(tp_result_, __LINE__), lhs, expr)
#define TP_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
