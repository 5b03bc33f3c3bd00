#include "launch/names.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace trainsim::launch {
namespace {

// The value as a JSON string: control characters and non-ASCII escaped.
std::string Quoted(std::string_view v) {
  return nlohmann::json(std::string(v))
      .dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
}

// One character as a message shows it: ';', ' ', '\n', '\x07', "'".
std::string CharName(char c) {
  switch (c) {
    case '\'':
      return "\"'\"";
    case '\n':
      return "'\\n'";
    case '\t':
      return "'\\t'";
    case '\r':
      return "'\\r'";
  }
  const unsigned char u = static_cast<unsigned char>(c);
  if (u < 0x20 || u >= 0x7f) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "'\\x%02x'", u);
    return buf;
  }
  return std::string("'") + c + "'";
}

Status Invalid(std::string_view field, std::string_view value, const char* kind,
               const std::string& problem, const char* rule) {
  return Status::InvalidInput(std::string(field) + ": " + Quoted(value) + " is not a valid " +
                              kind + ": " + problem + " (" + rule + ")");
}

std::string Characters(size_t n) {
  return std::to_string(n) + (n == 1 ? " character" : " characters");
}

std::string Length(std::string_view v) { return "it has " + Characters(v.size()); }

// "';' at position 2 is not allowed" for the first character of v[from, to)
// that `ok` refuses, or "" when there is none. Positions count from 1 in v.
template <typename Ok>
std::string BadChar(std::string_view v, Ok ok, size_t from = 0, size_t to = std::string_view::npos,
                    const char* where = "") {
  for (size_t i = from; i < std::min(to, v.size()); ++i) {
    if (!ok(v[i])) {
      return CharName(v[i]) + " at position " + std::to_string(i + 1) + " is not allowed" + where;
    }
  }
  return "";
}

bool Alnum(char c) {  // ASCII only, whatever the locale
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool In(char c, const char* set) {
  return c != '\0' && std::string_view(set).find(c) != std::string_view::npos;
}
bool LowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

constexpr char kJobRule[] =
    "1 to 63 letters, digits and hyphens, starting and ending with a letter or digit";
constexpr char kKubernetesRule[] =
    "1 to 63 lowercase letters, digits and hyphens, starting with a letter and ending with a "
    "letter or digit";
constexpr char kLabelRule[] = "1 to 128 letters, digits, '.', '_' and '-'";
constexpr char kS3Rule[] =
    "s3://BUCKET/PREFIX, at most 1024 characters: a bucket of 3 to 63 lowercase letters, digits, "
    "'.' and '-' that starts and ends with a letter or digit, a prefix of letters, digits, '.', "
    "'_', '-', '/' and '='";
constexpr char kRoleRule[] =
    "arn:aws:iam::ACCOUNT:role/NAME, 20 to 2048 characters, ACCOUNT 12 digits, NAME of letters, "
    "digits and '+=,.@_-/'";
constexpr char kPlanRule[] =
    "arn:aws:sagemaker:REGION:ACCOUNT:training-plan/NAME, 50 to 2048 characters, REGION of "
    "lowercase letters, digits and '-', ACCOUNT 12 digits, NAME of letters, digits and '-'";
constexpr char kReservationRule[] = "cr- and 8 or 17 lowercase hex digits";
constexpr char kImageRule[] =
    "1 to 255 letters, digits, '.', '_', '-', '/', ':' and '@', not starting with '-'";
constexpr char kEntryRule[] =
    "a relative path of 1 to 256 letters, digits, '.', '_', '-' and '/', without a '..' "
    "component, not starting with '-' or '/'";
constexpr char kPathRule[] =
    "1 to 4096 letters, digits, spaces, '.', '_', '-', '/', '+', ',', '=' and '@', not starting "
    "with '-'";
constexpr char kHostRule[] =
    "1 to 253 letters, digits, '.' and '-', starting with a letter or digit";

// The end of an ARN's partition ("arn:aws", "arn:aws-cn", "arn:aws-us-gov"), from index 7:
// lowercase letters and '-'. The caller has checked the "arn:aws" start.
size_t AfterPartition(std::string_view v) {
  size_t i = 7;
  while (i < v.size() && ((v[i] >= 'a' && v[i] <= 'z') || v[i] == '-')) ++i;
  return i;
}

}  // namespace

Status ValidateKubernetesName(std::string_view v, std::string_view field) {
  auto bad = [&](const std::string& problem) {
    return Invalid(field, v, "Kubernetes object name", problem, kKubernetesRule);
  };
  if (v.empty()) return bad("it is empty");
  if (v.size() > 63) return bad(Length(v));
  std::string c = BadChar(v, [](char ch) { return LowerAlnum(ch) || ch == '-'; });
  if (!c.empty()) return bad(c);
  if (v.front() < 'a' || v.front() > 'z') return bad("it does not start with a letter");
  if (v.back() == '-') return bad("it ends with a hyphen");
  return Status::Ok();
}

Status ValidateJobName(std::string_view v, std::string_view field) {
  auto bad = [&](const std::string& problem) {
    return Invalid(field, v, "SageMaker training job name", problem, kJobRule);
  };
  if (v.empty()) return bad("it is empty");
  if (v.size() > 63) return bad(Length(v));
  std::string c = BadChar(v, [](char ch) { return Alnum(ch) || ch == '-'; });
  if (!c.empty()) return bad(c);
  if (v.front() == '-') return bad("it starts with a hyphen");
  if (v.back() == '-') return bad("it ends with a hyphen");
  return Status::Ok();
}

Status ValidateLabel(std::string_view v, std::string_view field) {
  auto bad = [&](const std::string& problem) {
    return Invalid(field, v, "name", problem, kLabelRule);
  };
  if (v.empty()) return bad("it is empty");
  if (v.size() > 128) return bad(Length(v));
  std::string c = BadChar(v, [](char ch) { return Alnum(ch) || In(ch, "._-"); });
  return c.empty() ? Status::Ok() : bad(c);
}

Status ValidateS3Uri(std::string_view v, std::string_view field) {
  auto bad = [&](const std::string& problem) {
    return Invalid(field, v, "S3 URI", problem, kS3Rule);
  };
  if (v.size() > 1024) return bad(Length(v));
  constexpr std::string_view kScheme = "s3://";
  if (v.substr(0, kScheme.size()) != kScheme) return bad("it does not start with s3://");
  const size_t start = kScheme.size();
  const size_t slash = std::min(v.find('/', start), v.size());
  const std::string_view bucket = v.substr(start, slash - start);
  if (bucket.size() < 3 || bucket.size() > 63) {
    return bad("the bucket has " + Characters(bucket.size()));
  }
  std::string c = BadChar(
      v, [](char ch) { return LowerAlnum(ch) || In(ch, ".-"); }, start, slash, " in the bucket");
  if (!c.empty()) return bad(c);
  if (!LowerAlnum(bucket.front())) return bad("the bucket starts with " + CharName(bucket.front()));
  if (!LowerAlnum(bucket.back())) return bad("the bucket ends with " + CharName(bucket.back()));
  if (bucket.find("..") != std::string_view::npos) return bad("the bucket has \"..\"");
  c = BadChar(
      v, [](char ch) { return Alnum(ch) || In(ch, "._-/="); }, slash, std::string_view::npos,
      " in the prefix");
  return c.empty() ? Status::Ok() : bad(c);
}

Status ValidateRoleArn(std::string_view v, std::string_view field) {
  auto bad = [&](const std::string& problem) {
    return Invalid(field, v, "IAM role ARN", problem, kRoleRule);
  };
  if (v.size() < 20 || v.size() > 2048) return bad(Length(v));
  if (v.substr(0, 7) != "arn:aws") return bad("it does not start with arn:aws");
  size_t i = AfterPartition(v);
  if (v.substr(i, 6) != ":iam::") return bad("it is not an IAM ARN (no :iam:: after arn:aws)");
  i += 6;
  const size_t account = i;
  while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
  if (i - account != 12 || i >= v.size() || v[i] != ':') return bad("the account is not 12 digits");
  if (v.substr(i + 1, 5) != "role/")
    return bad("it does not name a role (role/NAME after the account)");
  i += 6;
  if (i == v.size()) return bad("the role name is empty");
  std::string c = BadChar(
      v, [](char ch) { return Alnum(ch) || In(ch, "+=,.@_-/"); }, i, std::string_view::npos,
      " in the role name");
  return c.empty() ? Status::Ok() : bad(c);
}

Status ValidateTrainingPlanArn(std::string_view v, std::string_view field) {
  auto bad = [&](const std::string& problem) {
    return Invalid(field, v, "training plan ARN", problem, kPlanRule);
  };
  if (v.size() < 50 || v.size() > 2048) return bad(Length(v));
  if (v.substr(0, 7) != "arn:aws") return bad("it does not start with arn:aws");
  size_t i = AfterPartition(v);
  if (v.substr(i, 11) != ":sagemaker:") return bad("it is not a SageMaker ARN");
  i += 11;
  while (i < v.size() && (LowerAlnum(v[i]) || v[i] == '-')) ++i;
  if (i >= v.size() || v[i] != ':') return bad("the region is not lowercase letters, digits, '-'");
  const size_t account = ++i;
  while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
  if (i - account != 12 || i >= v.size() || v[i] != ':') return bad("the account is not 12 digits");
  if (v.substr(i + 1, 14) != "training-plan/") {
    return bad("it does not name a training plan (training-plan/NAME after the account)");
  }
  i += 15;
  if (i == v.size()) return bad("the plan name is empty");
  std::string c = BadChar(
      v, [](char ch) { return Alnum(ch) || ch == '-'; }, i, std::string_view::npos,
      " in the plan name");
  return c.empty() ? Status::Ok() : bad(c);
}

Status ValidateCapacityReservationId(std::string_view v, std::string_view field) {
  auto bad = [&](const std::string& problem) {
    return Invalid(field, v, "Capacity Block id", problem, kReservationRule);
  };
  if (v.substr(0, 3) != "cr-") return bad("it does not start with cr-");
  if (v.size() != 11 && v.size() != 20) return bad(Length(v));
  std::string c = BadChar(
      v, [](char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); }, 3);
  return c.empty() ? Status::Ok() : bad(c);
}

Status ValidateImageUri(std::string_view v, std::string_view field) {
  auto bad = [&](const std::string& problem) {
    return Invalid(field, v, "image URI", problem, kImageRule);
  };
  if (v.empty()) return bad("it is empty");
  if (v.size() > 255) return bad(Length(v));
  std::string c = BadChar(v, [](char ch) { return Alnum(ch) || In(ch, "._-/:@"); });
  if (!c.empty()) return bad(c);
  if (v.front() == '-') return bad("it starts with '-'");
  return Status::Ok();
}

Status ValidateEntryPoint(std::string_view v, std::string_view field) {
  auto bad = [&](const std::string& problem) {
    return Invalid(field, v, "entry point", problem, kEntryRule);
  };
  if (v.empty()) return bad("it is empty");
  if (v.size() > 256) return bad(Length(v));
  std::string c = BadChar(v, [](char ch) { return Alnum(ch) || In(ch, "._-/"); });
  if (!c.empty()) return bad(c);
  if (v.front() == '-' || v.front() == '/') return bad("it starts with " + CharName(v.front()));
  const std::string padded = "/" + std::string(v) + "/";
  if (padded.find("/../") != std::string::npos) return bad("it has a '..' component");
  return Status::Ok();
}

Status ValidatePath(std::string_view v, std::string_view field) {
  auto bad = [&](const std::string& problem) {
    return Invalid(field, v, "path", problem, kPathRule);
  };
  if (v.empty()) return bad("it is empty");
  if (v.size() > 4096) return bad(Length(v));
  std::string c = BadChar(v, [](char ch) { return Alnum(ch) || In(ch, " ._-/+,=@"); });
  if (!c.empty()) return bad(c);
  if (v.front() == '-') return bad("it starts with '-'");
  return Status::Ok();
}

Status ValidateHostName(std::string_view v, std::string_view field) {
  auto bad = [&](const std::string& problem) {
    return Invalid(field, v, "host name", problem, kHostRule);
  };
  if (v.empty()) return bad("it is empty");
  if (v.size() > 253) return bad(Length(v));
  std::string c = BadChar(v, [](char ch) { return Alnum(ch) || In(ch, ".-"); });
  if (!c.empty()) return bad(c);
  if (!Alnum(v.front())) return bad("it starts with " + CharName(v.front()));
  return Status::Ok();
}

std::string ShellQuote(std::string_view word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string ShellJoin(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& w : argv) {
    if (!out.empty()) out += ' ';
    out += ShellQuote(w);
  }
  return out;
}

}  // namespace trainsim::launch
