// Every op of the engine, by family: one header per family, each op declared
// there with a one-line comment. A family has the same name in every layer:
// ops/<family>.h validates and dispatches, cpu/<family> and gpu/<family> hold
// the two streams' kernels, autograd/<family> records the graph, and
// bindings/<family>.cpp exposes it as lucid._C.<op>.
#pragma once

// Tensors: creation, copies, casts and transfers; shapes and views; Python numbers.
#include "ops/copy.h"
#include "ops/scalar.h"
#include "ops/shape.h"

// Elementwise.
#include "ops/bitwise.h"
#include "ops/elementwise.h"
#include "ops/inplace.h"
#include "ops/math.h"
#include "ops/special.h"

// Along axes: reductions, scans, sorting, histograms, index reads and writes.
#include "ops/histogram.h"
#include "ops/indexing.h"
#include "ops/reduction.h"
#include "ops/scan.h"
#include "ops/sort.h"

// Linear algebra.
#include "ops/decomposition.h"
#include "ops/linalg.h"

// Layers.
#include "ops/conv.h"
#include "ops/conv_geometry.h"
#include "ops/embedding.h"
#include "ops/linear.h"
#include "ops/normalization.h"
#include "ops/pool.h"
#include "ops/recurrent.h"

// Quantization.
#include "ops/fake_quantize_learnable.h"
#include "ops/group_quant.h"
#include "ops/int4_linear.h"
#include "ops/weight_gemv.h"
#include "ops/int4_pack.h"
#include "ops/qconv2d.h"
#include "ops/qelementwise.h"
#include "ops/qmatmul.h"
#include "ops/quantize.h"
