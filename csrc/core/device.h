// The two compute streams. "gpu" is MLX on Metal, CUDA, or (with
// LUCID_MLX_DEVICE=cpu) MLX's own CPU backend.
#pragma once
#include <cstdint>
#include <string>

namespace lucid {

enum class Device : uint8_t { CPU, GPU };

const char* device_name(Device d);                 // "cpu" / "gpu"
Device device_from_name(const std::string& name);  // accepts metal/cuda aliases; ValueError otherwise

}  // namespace lucid
