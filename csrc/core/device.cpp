#include "core/device.h"

#include "core/errors.h"

namespace lucid {

const char* device_name(Device d) { return d == Device::CPU ? "cpu" : "gpu"; }

Device device_from_name(const std::string& name) {
  if (name == "cpu") return Device::CPU;
  if (name == "gpu" || name == "metal" || name == "cuda" || name == "mps") return Device::GPU;
  throw ValueError("device: expected 'cpu' or 'gpu' (aliases 'metal', 'cuda'), got '" + name + "'");
}

}  // namespace lucid
