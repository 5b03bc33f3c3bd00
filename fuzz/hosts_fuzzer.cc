// Hosts files of `trainsim launch --hosts FILE` (launch/hosts.h ParseHosts).
//
// Checks:
// - every error starts "fuzz.hosts:N: " at a line the input has, except the one documented
//   whole-file error, "fuzz.hosts: no hosts";
// - round trip: the hosts written in OpenMPI's format, as a launch bundle's hostfile is
//   ("HOST slots=N" per line), read back to the same hosts in the same order;
// - every host read is a valid host name (launch/names.h), and no host is empty.
#include <string>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "launch/hosts.h"
#include "launch/names.h"

namespace {

using trainsim::Expected;
using trainsim::fuzz::Check;

constexpr char kFile[] = "fuzz.hosts";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = trainsim::fuzz::Text(data, size);
  Expected<std::vector<std::string>> hosts = trainsim::launch::ParseHosts(text, kFile);
  if (!hosts.ok()) {
    const std::string& message = hosts.status().message();
    int line = 0;
    if (message == std::string(kFile) + ": no hosts") return 0;
    Check(trainsim::fuzz::StartsWithLine(message, kFile, &line),
          "an error without FILE:LINE: ", message);
    Check(line <= trainsim::fuzz::LineCount(text), "an error at a line the input has not", message);
    return 0;
  }
  std::string written;
  for (const std::string& h : *hosts) {
    Check(!h.empty(), "an empty host");
    Check(trainsim::launch::ValidateHostName(h, "host").ok(), "an invalid host read", h);
    written += h + " slots=8\n";
  }
  Expected<std::vector<std::string>> again = trainsim::launch::ParseHosts(written, kFile);
  Check(again.ok(), "the hosts written do not read back", again.status().message());
  Check(*again == *hosts, "the hosts read back differ", written);
  return 0;
}
