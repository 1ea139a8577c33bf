"""Writes observer_refs.py: PyTorch's qparams for every case of observer_cases.py.

Run with a Python that has torch (not part of the test suite):
    python tests/quantization/make_observer_refs.py
"""
import os
import sys

import torch
from torch.ao.quantization import observer as tobs

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import observer_cases as C  # noqa: E402

DT = {"quint8": torch.quint8, "qint8": torch.qint8, "qint32": torch.qint32}
QS = {n: getattr(torch, n) for n in ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
                                     "per_channel_symmetric")}


def torch_kwargs(kw):
    kw = dict(kw)
    kw["dtype"] = DT[kw["dtype"]]
    kw["qscheme"] = QS[kw["qscheme"]]
    return kw


def main():
    torch.set_num_threads(1)
    refs = {}
    for obs_name, configs in C.OBSERVERS.items():
        for cfg_name, kw in configs:
            for data_name, batches in C.datasets().items():
                for nb in C.BATCHES:
                    obs = getattr(tobs, obs_name)(**torch_kwargs(kw))
                    for b in batches[:nb]:
                        obs(torch.from_numpy(b.copy()))
                    s, z = obs.calculate_qparams()
                    refs[(obs_name, cfg_name, data_name, nb)] = (
                        [float(v).hex() for v in s.reshape(-1).tolist()], [int(v) for v in z.reshape(-1).tolist()])
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "observer_refs.py")
    with open(path, "w") as f:
        f.write('"""PyTorch %s qparams for observer_cases.py, written by make_observer_refs.py.\n'
                'Key: (observer, config, data, batches fed) -> ([scale as float.hex], [zero_point])."""\n'
                % torch.__version__.split("+")[0])
        f.write("REFS = {\n")
        for k, v in refs.items():
            f.write(f"    {k!r}: {v!r},\n")
        f.write("}\n")
    print(len(refs), "references written to", path)


if __name__ == "__main__":
    main()
