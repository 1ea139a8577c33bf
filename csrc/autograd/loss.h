// cross_entropy's common case run and recorded in C++ (node.h): logits of
// shape (N, C, *), class-index targets that are all classes (none ignored, no
// class weights, no label smoothing) and the mean. `_C.autograd_cross_entropy
// (input, target)` runs what lucid/nn/functional/loss.py's `_CrossEntropyIndex`
// ran for that case, op for op (log_softmax's ops, the target log-probabilities
// gathered, their negated sum over N): the same bits. It returns None when a
// target is not a class in [0, C) (or there are 2**24 targets or more), for
// the caller's general form, which ignores or rejects them. The node,
// CrossEntropyIndexBackward, has its first-order formula here
// (softmax - onehot, over N); under create_graph the walk calls
// `_CrossEntropyTargets` in lucid/nn/functional/loss.py.
#pragma once
#include <pybind11/pybind11.h>

namespace lucid::autograd {

void init_loss(pybind11::module_& m);

}  // namespace lucid::autograd
