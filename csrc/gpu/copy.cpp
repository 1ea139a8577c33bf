#include "gpu/copy.h"

#include <limits>

#include "core/convert.h"
#include "gpu/array.h"

namespace lucid::gpu {

namespace {
// Float -> integer with the CPU stream's defined behaviour: NaN -> 0,
// saturation, truncation toward zero. MLX's plain astype leaves those cases
// to the hardware, which differs between backends.
mx::array float_to_int(const mx::array& x, DType dtype) {
  auto s = stream();
  return dispatch(dtype, [&](auto tag) -> mx::array {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      mx::Dtype dt = to_mx(dtype);
      double lo = static_cast<double>(std::numeric_limits<T>::min());
      double hi = static_cast<double>(std::numeric_limits<T>::max());
      mx::array xf = mx::astype(x, mx::float32, s);
      mx::array safe = mx::where(mx::isnan(xf, s), mx::array(0.0f), xf, s);
      // Clamp into the integer range (the float image of INT32_MAX rounds up
      // past it; the selects below replace those lanes), then cast.
      mx::array inner = mx::clip(safe, mx::array(static_cast<float>(lo)), mx::array(static_cast<float>(hi)), s);
      mx::array cast = mx::astype(inner, dt, s);
      cast = mx::where(mx::greater_equal(xf, mx::array(static_cast<float>(hi)), s), mx::array(std::numeric_limits<T>::max(), dt), cast, s);
      cast = mx::where(mx::less_equal(xf, mx::array(static_cast<float>(lo)), s), mx::array(std::numeric_limits<T>::min(), dt), cast, s);
      return cast;
    } else {
      return mx::astype(x, to_mx(dtype), s);
    }
  });
}
}  // namespace

Tensor astype(const Tensor& src, DType dtype) {
  const mx::array& a = array_of(src);
  if (is_floating(src.dtype()) && is_integral(dtype)) return wrap(float_to_int(a, dtype));
  return wrap(mx::astype(a, to_mx(dtype), stream()));
}

Tensor full(const Shape& shape, DType dtype, double value) {
  auto s = stream();
  mx::array v = dispatch(dtype, [&](auto tag) -> mx::array {
    using T = typename decltype(tag)::type;
    T converted = convert<T>(value);  // the CPU stream's conversion, exactly
    if constexpr (is_half_v<T>) return mx::astype(mx::array(static_cast<float>(converted)), to_mx(dtype), s);
    else return mx::array(converted);
  });
  return wrap(mx::full(to_mx_shape(shape), v, s));
}

Tensor contiguous(const Tensor& src) { return wrap(mx::contiguous(array_of(src), false, stream())); }

}  // namespace lucid::gpu
