// The hosts file `trainsim launch --hosts FILE` reads for torchrun and mpirun:
// one host per line, optionally followed by OpenMPI's `slots=N`; blank lines
// and `#` comments are skipped. Every host name is checked (launch/names.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace trainsim::launch {

// The hosts in file order. Errors name `file` and the line:
//   my hosts:2: "a;b" is not a valid host name: ...
//   my hosts:3: expected HOST or HOST slots=N, got "a b"
//   my hosts: no hosts
Expected<std::vector<std::string>> ParseHosts(std::string_view text, const std::string& file);
Expected<std::vector<std::string>> LoadHostsFile(const std::string& path);

}  // namespace trainsim::launch
