// Expected<T>: the value of an operation that can fail in an expected way.
//
// Contract: an Expected holds either a T or an Error, never both. Expected
// failures (bad input, a missing file, a refused transition) travel as
// values; exceptions are reserved for the unrecoverable and are caught at the
// verb boundary. Error::message is one line meant for a user: it names the
// flag, file or field that is wrong. Error::kind says what sort of failure
// it is, so a caller can branch without reading the message.
// Error::exit_code is the process exit code a verb returns when it gives up
// because of this error. Error::output is empty except for the kinds that
// carry what a failing child printed (hook: the repository hook's output,
// its tail, bounded); it is untrusted text and is fenced as data before it
// reaches a prompt.
#pragma once

#include <cassert>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace devgraph {

// What kind of failure an Error is, for callers that branch on it: a bad
// flag or input (usage), a change or request the callee declines (refused,
// the default), something that is not there (not_found), a failure worth
// retrying later (transient: a network or service hiccup), a limit of time
// that ran out (timeout), an engine defect such as code and graph
// disagreeing (internal), a stop a person asked for (interrupted: a
// signal; the work is resumable, nothing failed), and a repository's own
// git hook (pre-commit, commit-msg) that refused a commit (hook: the work
// goes back to whoever wrote it, with Error::output).
enum class ErrorKind { usage, refused, not_found, transient, timeout, internal, interrupted, hook };

inline const char* kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::usage:
      return "usage";
    case ErrorKind::refused:
      return "refused";
    case ErrorKind::not_found:
      return "not_found";
    case ErrorKind::transient:
      return "transient";
    case ErrorKind::timeout:
      return "timeout";
    case ErrorKind::internal:
      return "internal";
    case ErrorKind::interrupted:
      return "interrupted";
    case ErrorKind::hook:
      return "hook";
  }
  return "refused";
}

struct Error {
  std::string message;
  int exit_code = 1;
  ErrorKind kind = ErrorKind::refused;
  std::string output = {};
};

// Tag used to build a failed Expected: `return fail("no such run");`.
inline Error fail(std::string message, int exit_code = 1) {
  return Error{std::move(message), exit_code, ErrorKind::refused};
}
// A failure of a given kind: `return fail(ErrorKind::not_found, "...");`.
inline Error fail(ErrorKind kind, std::string message, int exit_code = 1) {
  return Error{std::move(message), exit_code, kind};
}

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Expected(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Expected<void> {
 public:
  Expected() = default;
  Expected(Error error) : error_(std::move(error)), failed_(true) {}  // NOLINT

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const {
    assert(failed_);
    return error_;
  }

 private:
  Error error_;
  bool failed_ = false;
};

using Status = Expected<void>;

}  // namespace devgraph

// Propagate a failure to the caller: DG_TRY(auto x, parse(...));
#define DG_CONCAT_INNER(a, b) a##b
#define DG_CONCAT(a, b) DG_CONCAT_INNER(a, b)
#define DG_TRY(decl, expr)                                                        \
  auto DG_CONCAT(dg_try_, __LINE__) = (expr);                                     \
  if (!DG_CONCAT(dg_try_, __LINE__)) return DG_CONCAT(dg_try_, __LINE__).error(); \
  decl = std::move(DG_CONCAT(dg_try_, __LINE__)).value()
#define DG_CHECK(expr)                        \
  do {                                        \
    auto dg_check_ = (expr);                  \
    if (!dg_check_) return dg_check_.error(); \
  } while (0)
