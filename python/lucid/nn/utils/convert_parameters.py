"""One flat vector from many parameters, and back."""
from __future__ import annotations

import lucid._namespace as lucid


def parameters_to_vector(parameters):
    """All parameters flattened and concatenated, in order (one device required).

    >>> import lucid
    >>> lucid.nn.utils.parameters_to_vector([lucid.ones(2), lucid.zeros(1, 1)]).tolist()
    [1.0, 1.0, 0.0]
    """
    params = list(parameters)
    devices = {p.device for p in params}
    if len(devices) > 1:
        raise ValueError(f"parameters_to_vector(): parameters are on several devices {sorted(str(d) for d in devices)}")
    return lucid.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of the 1-D ``vec`` into each parameter (in place, no grad).
    ValueError when the lengths differ; nothing is written then."""
    if not isinstance(vec, lucid.Tensor) or vec.ndim != 1:
        raise TypeError(f"vector_to_parameters(): expected a 1-D lucid Tensor for 'vec', got "
                        f"{type(vec).__name__ if not isinstance(vec, lucid.Tensor) else tuple(vec.shape)}")
    params = list(parameters)
    total = sum(p.numel() for p in params)
    if total != vec.shape[0]:
        raise ValueError(f"vector_to_parameters(): 'vec' has {vec.shape[0]} elements, the parameters {total}")
    with lucid.no_grad():
        offset = 0
        for p in params:
            n = p.numel()
            p.copy_(vec[offset:offset + n].reshape(tuple(p.shape)))
            offset += n
