// Status and Expected<T>: errors as values at library boundaries.
//
// A Status is either ok or carries a code and a message a user can act on
// ("scenarios/x.json:7:12: parallel.tp = 3 does not divide model.heads = 96").
// Expected<T> holds either a T or a non-ok Status. Neither throws.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace trainsim {

class Status {
 public:
  enum class Code { kOk, kInvalidInput, kNotFound, kInternal, kCancelled };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidInput(std::string msg) {
    return Status(Code::kInvalidInput, std::move(msg));
  }
  static Status NotFound(std::string msg) { return Status(Code::kNotFound, std::move(msg)); }
  static Status Internal(std::string msg) { return Status(Code::kInternal, std::move(msg)); }
  // The caller asked for the work to stop (planner::PlanOptions::cancel).
  static Status Cancelled(std::string msg) { return Status(Code::kCancelled, std::move(msg)); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(Code code, std::string msg) : code_(code), message_(std::move(msg)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Expected(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace trainsim
