// What the GPU stream runs on, without exposing MLX's headers.
#pragma once

namespace lucid::gpu {

bool is_available();
const char* backend();  // "metal", "cuda" or "mlx-cpu"

}  // namespace lucid::gpu
