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

No pickle is involved: loading a file never runs code from it. A file that
cannot be read as such a checkpoint (a directory, a truncated file, a bad
header, malformed or hostile structure metadata, an entry whose type lucid has
no dtype for) raises ``lucid.SerializationError`` (a ``ValueError``) naming the
file and, where there is one, the entry.
"""
from __future__ import annotations

import errno
import json
import os
import secrets
import stat
import tempfile
from collections import OrderedDict

import numpy as np

from ._creation import tensor
from ._device import as_device
from ._tensor import Tensor

__all__ = ["save", "load", "SerializationError"]


class SerializationError(ValueError):
    """A file ``lucid.load`` cannot read: the message names the file and the entry."""

_FORMAT_KEY, _STRUCTURE_KEY = "format", "lucid.structure"
_SCALARS = (bool, int, float, str, type(None))
# Structure nesting deeper than this is rejected before Python's recursion limit is near.
_MAX_DEPTH = 256
# numpy dtypes of entries lucid can hold (float64 entries of foreign files load as float32).
_LOADABLE = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"}
_LEAF_DTYPES = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32"}


def _tensor_to_numpy(t: Tensor) -> np.ndarray:
    arr = np.asarray(t.detach().numpy(), order="C")  # (ascontiguousarray would turn 0-d into 1-d)
    if t.dtype.name == "bfloat16":
        # numpy() widened bf16 to float32 exactly; the top 16 bits are the bf16 pattern.
        arr = (arr.view(np.uint32) >> 16).astype(np.uint16)
    return arr


def _numpy_to_tensor(arr: np.ndarray, dtype: str, device, where: str):
    if dtype not in _LEAF_DTYPES:
        raise SerializationError(f"load(): {where}: lucid has no dtype for {dtype} entries (supported: "
                                 f"{', '.join(sorted(_LEAF_DTYPES))}; float64 loads as float32)")
    if dtype == "bfloat16":
        if arr.dtype != np.uint16:
            raise SerializationError(f"load(): {where}: a bfloat16 entry must be stored as uint16 bits, found "
                                     f"{arr.dtype}")
        arr = (arr.astype(np.uint32) << 16).view(np.float32)
    elif arr.dtype.name != dtype and not (dtype == "float32" and arr.dtype == np.float64):
        raise SerializationError(f"load(): {where}: the structure says {dtype} but the entry holds {arr.dtype}")
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


def _decode(node, arrays: dict, device, file: str, entry: str = "", depth: int = 0):
    """The object for a structure node, every node checked: metadata is untrusted input.
    ``entry`` is the node's dotted path in the structure, for messages."""
    where = f"{file!r}, entry {entry or '<root>'!r}"
    if depth > _MAX_DEPTH:
        raise SerializationError(f"load(): {where}: the structure nests deeper than {_MAX_DEPTH} levels")
    if not isinstance(node, dict) or len(node) not in (1, 2):
        raise SerializationError(f"load(): {where}: malformed structure node {_short(node)}")
    if "tensor" in node:
        name, dtype = node.get("tensor"), node.get("dtype")
        if set(node) != {"tensor", "dtype"} or not isinstance(name, str) or dtype not in _LEAF_DTYPES:
            raise SerializationError(f"load(): {where}: malformed tensor leaf {_short(node)}")
        if name not in arrays:
            raise SerializationError(f"load(): {where}: the file has no tensor entry {name!r}")
        return _numpy_to_tensor(arrays[name], dtype, device, f"{file!r}, entry {name!r}")
    if len(node) != 1:
        raise SerializationError(f"load(): {where}: malformed structure node {_short(node)}")
    (kind, body), = node.items()
    if kind in ("dict", "odict"):
        if not isinstance(body, list):
            raise SerializationError(f"load(): {where}: a {kind} node must hold a list of [key, value] pairs")
        out = OrderedDict() if kind == "odict" else {}
        for i, pair in enumerate(body):
            if not isinstance(pair, list) or len(pair) != 2:
                raise SerializationError(f"load(): {where}: item {i} of a {kind} node is not a [key, value] pair")
            key_node = pair[0]
            if not (isinstance(key_node, dict) and set(key_node) == {"value"}
                    and isinstance(key_node["value"], _SCALARS)):
                raise SerializationError(f"load(): {where}: dict key {i} must be a str, int, float, bool or None, "
                                         f"got {_short(key_node)}")
            key = key_node["value"]
            out[key] = _decode(pair[1], arrays, device, file, f"{entry}.{key}" if entry else str(key), depth + 1)
        return out
    if kind in ("list", "tuple"):
        if not isinstance(body, list):
            raise SerializationError(f"load(): {where}: a {kind} node must hold a list")
        items = [_decode(v, arrays, device, file, f"{entry}.{i}" if entry else str(i), depth + 1)
                 for i, v in enumerate(body)]
        return items if kind == "list" else tuple(items)
    if kind == "value":
        if not isinstance(body, _SCALARS):
            raise SerializationError(f"load(): {where}: a value must be a number, string, bool or None, "
                                     f"got {_short(body)}")
        return body
    raise SerializationError(f"load(): {where}: unknown structure node {_short(node)}")


def _short(obj) -> str:
    text = repr(obj)
    return text if len(text) <= 80 else text[:77] + "..."


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
    tmp = _create_sibling(path)
    try:
        mode = stat.S_IMODE(os.stat(tmp).st_mode)  # what the kernel gives a new file here
        save_file(tensors, tmp, metadata=metadata)
        # safetensors writes through its own 0o600 temporary file and renames it onto ``tmp``.
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _create_sibling(path: str) -> str:
    """Creates an empty temporary file next to ``path`` and returns its name.

    Created with mode 0o666 so the kernel applies the umask (and a folder's
    default ACL) exactly as for any file the user writes; ``save`` gives the
    checkpoint that mode (``tempfile.mkstemp`` and safetensors' own writer
    give 0o600 whatever the umask). Errors name ``path``, the file the
    caller asked for, not the temporary name.
    """
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "save(): the path is a directory", path)
    if not os.path.isdir(directory):
        why = "its folder is not a directory" if os.path.exists(directory) else "its folder does not exist"
        raise FileNotFoundError(errno.ENOENT, f"save(): cannot write the file: {why} ({directory!r})", path)
    for _ in range(100):
        tmp = os.path.join(directory, f".lucid-save-{secrets.token_hex(6)}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        except OSError as e:
            raise type(e)(e.errno, f"save(): cannot write the file: {e.strerror}", path) from None
        os.close(fd)
        return tmp
    raise FileExistsError(errno.EEXIST, "save(): no free temporary name next to the file", path)


def load(path, device=None, *, map_location=None):
    """Reads a file written by ``save`` and returns the same structure, with every
    tensor on ``device`` (``"cpu"`` by default, or ``"gpu"``; PyTorch's spelling
    ``map_location=`` is accepted too).

    A safetensors file from another tool (no lucid structure) loads as a flat
    ``dict`` of name -> tensor. Errors: FileNotFoundError for a missing path,
    ``lucid.SerializationError`` (a ValueError) naming the file and the entry for
    anything else that cannot be read.
    """
    from safetensors import SafetensorError, safe_open

    if map_location is not None:
        if device is not None:
            raise TypeError("load(): pass 'device' or 'map_location', not both")
        device = map_location
    if hasattr(path, "read") and not isinstance(path, (str, os.PathLike)):
        return _through_file(lambda tmp: load(tmp, device), path, write=False)
    dev = as_device("cpu" if device is None else device)
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"load(): argument 'path' must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"load(): no such file: {path!r}")
    if not os.path.isfile(path):
        raise SerializationError(f"load(): {path!r} is not a file (a directory?)")
    try:
        with safe_open(path, framework="numpy") as f:
            metadata = f.metadata() or {}
            arrays = {}
            for name in f.keys():
                arrays[name] = _read_entry(f, name, path)
    except SerializationError:
        raise
    except (SafetensorError, OSError, ValueError, TypeError, OverflowError) as e:
        raise SerializationError(f"load(): {path!r} is not a readable safetensors file: {e}") from None
    if metadata.get(_FORMAT_KEY) != "lucid" or _STRUCTURE_KEY not in metadata:
        return {name: _numpy_to_tensor(a, _NP_NAMES.get(a.dtype.str, a.dtype.name), dev, f"{path!r}, entry {name!r}")
                for name, a in arrays.items()}
    try:
        structure = json.loads(metadata[_STRUCTURE_KEY])
    except (ValueError, RecursionError) as e:
        raise SerializationError(f"load(): {path!r}: the structure metadata is not valid JSON: {e}") from None
    return _decode(structure, arrays, dev, path)


def _read_entry(f, name: str, path: str) -> np.ndarray:
    """One entry as numpy, rejected by name when lucid has no dtype for its type."""
    try:
        arr = f.get_tensor(name)
    except TypeError as e:  # safetensors raises TypeError for types numpy lacks (BF16, F8...)
        raise SerializationError(f"load(): {path!r}, entry {name!r}: unsupported entry type ({e})") from None
    if arr.dtype.name not in _LOADABLE and arr.dtype != np.uint16:  # uint16: bfloat16 bits, checked later
        raise SerializationError(f"load(): {path!r}, entry {name!r}: lucid has no dtype for {arr.dtype} entries "
                                 f"(supported: {', '.join(sorted(_LEAF_DTYPES))}; float64 loads as float32)")
    return arr


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
