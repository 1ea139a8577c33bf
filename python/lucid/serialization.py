"""``lucid.save`` / ``lucid.load``: checkpoints in the safetensors format.

File layout (a normal safetensors file, readable by any safetensors reader):

* every tensor of ``obj`` is one safetensors entry, named by its path in the
  structure joined with dots (``"fc.weight"``, ``"state.0.exp_avg"``);
* the header metadata holds ``"format": "lucid"`` and ``"lucid.structure"``:
  a JSON description of the non-tensor structure (dicts with their key types,
  lists, tuples, numbers, strings, None) with tensor leaves pointing to their
  entries and recording their lucid dtype.

bfloat16: numpy (and so ``safetensors.numpy``) has no bfloat16 type, so a
bfloat16 tensor is stored as its raw 16-bit patterns in a ``U16`` entry and
its leaf in the structure says ``"dtype": "bfloat16"``; ``load`` turns the bits
back into bfloat16 exactly. Other readers see those entries as uint16.

No pickle is involved: loading a file never runs code from it.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections import OrderedDict

import numpy as np

from ._tensor import Tensor

__all__ = ["save", "load"]

_FORMAT_KEY, _STRUCTURE_KEY = "format", "lucid.structure"
_SCALARS = (bool, int, float, str, type(None))


def _tensor_to_numpy(t: Tensor) -> np.ndarray:
    arr = np.asarray(t.detach().numpy(), order="C")  # (ascontiguousarray would turn 0-d into 1-d)
    if t.dtype.name == "bfloat16":
        # numpy() widened bf16 to float32 exactly; the top 16 bits are the bf16 pattern.
        arr = (arr.view(np.uint32) >> 16).astype(np.uint16)
    return arr


def _numpy_to_tensor(arr: np.ndarray, dtype: str, device):
    from ._creation import tensor

    if dtype == "bfloat16":
        if arr.dtype != np.uint16:
            raise ValueError(f"load(): a bfloat16 entry must be stored as uint16 bits, found {arr.dtype}")
        arr = (arr.astype(np.uint32) << 16).view(np.float32)
    return tensor(arr, dtype=dtype, device=device)


def _encode(obj, path: str, tensors: dict):
    """The JSON node for ``obj``; tensors are added to ``tensors`` under a unique name."""
    if isinstance(obj, Tensor):
        name, n = path or "tensor", 1
        while name in tensors:  # two paths may join to the same dotted name
            name, n = f"{path}#{n}", n + 1
        tensors[name] = _tensor_to_numpy(obj)
        return {"tensor": name, "dtype": obj.dtype.name}
    if isinstance(obj, dict):
        items = []
        for k, v in obj.items():
            if not isinstance(k, _SCALARS):
                raise TypeError(f"save(): dict keys must be str, int, float, bool or None, got "
                                f"{type(k).__name__} at {path or '<root>'!r}")
            items.append([_encode(k, path, {}), _encode(v, f"{path}.{k}" if path else str(k), tensors)])
        return {"odict" if isinstance(obj, OrderedDict) else "dict": items}
    if isinstance(obj, (list, tuple)):
        kind = "tuple" if isinstance(obj, tuple) else "list"
        return {kind: [_encode(v, f"{path}.{i}" if path else str(i), tensors) for i, v in enumerate(obj)]}
    if isinstance(obj, _SCALARS):
        return {"value": obj}
    if isinstance(obj, (np.integer, np.floating, np.bool_)):
        return {"value": obj.item()}
    hint = "; save its state_dict() instead" if hasattr(obj, "state_dict") else ""
    raise TypeError(f"save(): cannot store a {type(obj).__name__} at {path or '<root>'!r}; supported: tensors, "
                    f"dicts, lists, tuples, numbers, strings, None{hint}")


def _decode(node, arrays: dict, device):
    if "tensor" in node:
        if node["tensor"] not in arrays:
            raise ValueError(f"load(): the file has no tensor entry {node['tensor']!r}")
        return _numpy_to_tensor(arrays[node["tensor"]], node["dtype"], device)
    if "dict" in node or "odict" in node:
        out = OrderedDict() if "odict" in node else {}
        for k, v in node.get("dict", node.get("odict")):
            out[_decode(k, arrays, device)] = _decode(v, arrays, device)
        return out
    if "list" in node:
        return [_decode(v, arrays, device) for v in node["list"]]
    if "tuple" in node:
        return tuple(_decode(v, arrays, device) for v in node["tuple"])
    if "value" in node:
        return node["value"]
    raise ValueError(f"load(): malformed structure node {node!r}")


def save(obj, path) -> None:
    """Writes ``obj`` (a tensor, or dicts / lists / tuples of tensors, numbers and
    strings, e.g. a module's or an optimizer's ``state_dict()``) to ``path``.

    The file is written to a temporary name and renamed, so a failure never
    leaves a truncated checkpoint. Tensors from either stream are stored by value.

    >>> import os, tempfile, lucid
    >>> path = os.path.join(tempfile.mkdtemp(), "ckpt.safetensors")
    >>> lucid.save({"w": lucid.tensor([1.0, 2.0]), "step": 3}, path)
    >>> ckpt = lucid.load(path)
    >>> ckpt["w"].tolist(), ckpt["step"]
    ([1.0, 2.0], 3)
    """
    from safetensors.numpy import save_file

    if hasattr(path, "write") and not isinstance(path, (str, os.PathLike)):
        return _through_file(lambda tmp: save(obj, tmp), path, write=True)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"save(): argument 'path' must be a str or os.PathLike, got {type(path).__name__}")
    tensors: dict = {}
    structure = _encode(obj, "", tensors)
    metadata = {_FORMAT_KEY: "lucid", _STRUCTURE_KEY: json.dumps(structure)}
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".lucid-save-", dir=directory)
    os.close(fd)
    try:
        save_file(tensors, tmp, metadata=metadata)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def load(path, device=None, *, map_location=None):
    """Reads a file written by ``save`` and returns the same structure, with every
    tensor on ``device`` (``"cpu"`` by default, or ``"gpu"``; PyTorch's spelling
    ``map_location=`` is accepted too).

    A safetensors file from another tool (no lucid structure) loads as a flat
    ``dict`` of name -> tensor. Errors: FileNotFoundError, ValueError for a
    file that is not valid safetensors.
    """
    from safetensors import SafetensorError, safe_open
    from safetensors.numpy import load_file

    from ._device import as_device

    if map_location is not None:
        if device is not None:
            raise TypeError("load(): pass 'device' or 'map_location', not both")
        device = map_location
    if hasattr(path, "read") and not isinstance(path, (str, os.PathLike)):
        return _through_file(lambda tmp: load(tmp, device), path, write=False)
    dev = as_device("cpu" if device is None else device)
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"load(): no such file: {path!r}")
    try:
        with safe_open(path, framework="numpy") as f:
            metadata = f.metadata() or {}
        arrays = load_file(path)
    except SafetensorError as e:
        raise ValueError(f"load(): {path!r} is not a readable safetensors file: {e}") from None
    if metadata.get(_FORMAT_KEY) != "lucid" or _STRUCTURE_KEY not in metadata:
        return {name: _numpy_to_tensor(a, _NP_NAMES.get(a.dtype.str, a.dtype.name), dev) for name, a in arrays.items()}
    return _decode(json.loads(metadata[_STRUCTURE_KEY]), arrays, dev)


def _through_file(run, fileobj, write: bool):
    """save / load with a binary file object (io.BytesIO, an open file): the bytes go
    through a temporary file, so the file path code is the only format code."""
    fd, tmp = tempfile.mkstemp(prefix=".lucid-io-")
    os.close(fd)
    try:
        if write:
            run(tmp)
            with open(tmp, "rb") as f:
                fileobj.write(f.read())
            return None
        data = fileobj.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError(f"load(): the file object must be opened in binary mode, read() gave "
                            f"{type(data).__name__}")
        with open(tmp, "wb") as f:
            f.write(data)
        return run(tmp)
    finally:
        os.remove(tmp)


_NP_NAMES = {np.dtype(np.bool_).str: "bool", np.dtype(np.float64).str: "float32"}
