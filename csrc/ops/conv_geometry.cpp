#include "ops/conv_geometry.h"

#include "core/errors.h"
#include "ops/nn_common.h"

namespace lucid::ops {

using nn_detail::ints_str;

namespace {

std::string layout_of(int64_t nd) {
  return nd == 1 ? "(N, C, L)" : nd == 2 ? "(N, C, H, W)" : "(N, C, D, H, W)";
}

// "(a, b)" of the spatial part, as Python prints a tuple ("(a,)" for one).
std::string tuple_str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

void require_count(const std::vector<int64_t>& v, int64_t nd, const std::string& fn, const char* arg) {
  if (static_cast<int64_t>(v.size()) != nd)
    throw ValueError(fn + "(): argument '" + arg + "' must have " + std::to_string(nd) + " entries, got " +
                     ints_str(v));
}

}  // namespace

ConvGeometry conv_geometry(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias, int64_t nd,
                           bool transposed, const std::vector<int64_t>& stride,
                           const std::optional<std::vector<int64_t>>& padding, const std::string& padding_mode,
                           const std::vector<int64_t>& output_padding, const std::vector<int64_t>& dilation,
                           int64_t groups, const std::string& fn) {
  if (nd < 1 || nd > 3) throw ValueError(fn + "(): a convolution has 1 to 3 spatial axes, got " + std::to_string(nd));
  const Shape& xs = x.shape();
  const Shape& ws = weight.shape();
  const int64_t xr = static_cast<int64_t>(xs.size());
  if (xr != nd + 1 && xr != nd + 2)
    throw ValueError(fn + "(): expected a " + std::to_string(nd + 1) + "-D (unbatched) or " + std::to_string(nd + 2) +
                     "-D (batched) input " + layout_of(nd) + ", got shape " + shape_str(xs));
  if (static_cast<int64_t>(ws.size()) != nd + 2)
    throw ValueError(fn + "(): expected a " + std::to_string(nd + 2) + "-D weight " +
                     (transposed ? "(in, out/groups, *kernel)" : "(out, in/groups, *kernel)") + ", got shape " +
                     shape_str(ws));
  if (groups < 1) throw ValueError(fn + "(): argument 'groups' must be a positive int, got " + std::to_string(groups));
  require_count(stride, nd, fn, "stride");
  require_count(dilation, nd, fn, "dilation");
  for (int64_t v : stride)
    if (v < 1) throw ValueError(fn + "(): argument 'stride' must be positive, got " + tuple_str(stride));
  for (int64_t v : dilation)
    if (v < 1) throw ValueError(fn + "(): argument 'dilation' must be positive, got " + tuple_str(dilation));

  ConvGeometry g;
  g.unbatched = xr == nd + 1;
  const int64_t lead = g.unbatched ? 0 : 1;  // index of the channel axis
  const int64_t c = xs[lead];
  std::vector<int64_t> in(nd), k(nd);
  for (int64_t i = 0; i < nd; ++i) in[i] = xs[lead + 1 + i], k[i] = ws[2 + i];
  const std::string gs = std::to_string(groups);

  // The channel count against the weight first: it is the mistake a caller makes;
  // divisibility by groups follows from it for a direct conv.
  if (transposed) {
    if (ws[0] != c)
      throw ValueError(fn + "(): expected input with " + std::to_string(ws[0]) + " channels (weight " +
                       shape_str(ws) + "), got input of shape " + shape_str(xs));
    if (c % groups != 0)
      throw ValueError(fn + "(): in_channels (" + std::to_string(c) + ") must be divisible by groups (" + gs + ")");
    g.out_channels = ws[1] * groups;
  } else {
    if (ws[1] * groups != c)
      throw ValueError(fn + "(): expected input with " + std::to_string(ws[1] * groups) + " channels (weight " +
                       shape_str(ws) + ", groups=" + gs + "), got input of shape " + shape_str(xs));
    if (ws[0] % groups != 0)
      throw ValueError(fn + "(): out_channels (" + std::to_string(ws[0]) + ") must be divisible by groups (" + gs +
                       ")");
    g.out_channels = ws[0];
  }
  for (int64_t v : k)
    if (v < 1) throw ValueError(fn + "(): weight must not be empty, got shape " + shape_str(ws));
  if (bias && !(bias->ndim() == 1 && bias->size(0) == g.out_channels))
    throw ValueError(fn + "(): expected a bias of shape (" + std::to_string(g.out_channels) + ",), got " +
                     shape_str(bias->shape()));

  std::vector<int64_t> low(nd), high(nd);
  if (!padding) {
    if (transposed || (padding_mode != "valid" && padding_mode != "same"))
      throw ValueError(fn + "(): argument 'padding' must be " + (transposed ? "" : "'valid', 'same', ") +
                       "an int or a tuple of ints, got '" + padding_mode + "'");
    for (int64_t i = 0; i < nd; ++i) {
      if (padding_mode == "same" && stride[i] != 1)
        throw ValueError(fn + "(): padding='same' is not supported for strided convolutions, got stride " +
                         tuple_str(stride));
      const int64_t total = padding_mode == "same" ? dilation[i] * (k[i] - 1) : 0;
      low[i] = total / 2, high[i] = total - total / 2;
    }
  } else {
    require_count(*padding, nd, fn, "padding");
    for (int64_t v : *padding)
      if (v < 0) throw ValueError(fn + "(): argument 'padding' must be non-negative, got " + tuple_str(*padding));
    for (int64_t i = 0; i < nd; ++i) low[i] = high[i] = (*padding)[i];
  }

  g.out_sizes.resize(nd);
  if (transposed) {
    require_count(output_padding, nd, fn, "output_padding");
    for (int64_t i = 0; i < nd; ++i) {
      const int64_t op = output_padding[i];
      if (op < 0 || !(op < stride[i] || op < dilation[i]))
        throw ValueError(fn + "(): output_padding " + tuple_str(output_padding) +
                         " must be non-negative and smaller than either the stride " + tuple_str(stride) +
                         " or the dilation " + tuple_str(dilation));
    }
    for (int64_t i = 0; i < nd; ++i)
      g.out_sizes[i] = (in[i] - 1) * stride[i] - 2 * low[i] + dilation[i] * (k[i] - 1) + output_padding[i] + 1;
    for (int64_t v : g.out_sizes)
      if (v <= 0)
        throw ValueError(fn + "(): the output size " + tuple_str(g.out_sizes) +
                         " is not positive for input of shape " + shape_str(xs));
    // The direct conv over the stride-dilated input pads d*(k-1) - p below
    // and that plus output_padding above.
    for (int64_t i = 0; i < nd; ++i) {
      const int64_t edge = dilation[i] * (k[i] - 1) - low[i];
      low[i] = edge, high[i] = edge + output_padding[i];
    }
  } else {
    std::vector<int64_t> padded(nd);
    bool fits = true;
    for (int64_t i = 0; i < nd; ++i) {
      padded[i] = in[i] + low[i] + high[i];
      fits = fits && padded[i] >= dilation[i] * (k[i] - 1) + 1;
    }
    if (!fits) {
      std::vector<int64_t> reach(nd);
      for (int64_t i = 0; i < nd; ++i) reach[i] = dilation[i] * (k[i] - 1) + 1;
      throw ValueError(fn + "(): input of shape " + shape_str(xs) + " (padded to " + tuple_str(padded) +
                       ") is smaller than the dilated kernel " + tuple_str(reach) + ": the kernel does not fit");
    }
    for (int64_t i = 0; i < nd; ++i) g.out_sizes[i] = (padded[i] - dilation[i] * (k[i] - 1) - 1) / stride[i] + 1;
  }
  g.pad_low = std::move(low);
  g.pad_high = std::move(high);
  return g;
}

}  // namespace lucid::ops
