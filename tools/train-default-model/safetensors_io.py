"""Minimal safetensors reader/writer (no `safetensors` package on Debian): 8-byte LE header length,
JSON header {name: {dtype, shape, data_offsets}}, then the raw little-endian tensor bytes."""
import json
import struct

import numpy as np
import torch

_NP = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}
_NAME = {np.dtype(v).str: k for k, v in _NP.items()}


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] == "BF16":
            a, b = meta["data_offsets"]
            u16 = np.frombuffer(raw[base + a : base + b], dtype="<u2").astype(np.uint32) << 16
            arr = u16.view(np.float32)
        else:
            a, b = meta["data_offsets"]
            arr = np.frombuffer(raw[base + a : base + b], dtype=np.dtype(_NP[meta["dtype"]]).newbyteorder("<"))
        out[name] = torch.from_numpy(arr.reshape(meta["shape"]).copy())
    return out


def write_safetensors(path, tensors, metadata=None):
    """tensors: {name: torch.Tensor or np.ndarray}; written in sorted order, offsets 8-byte aligned."""
    header = {}
    blobs = []
    off = 0
    for name in sorted(tensors):
        t = tensors[name]
        arr = t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        arr = np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("<")))
        data = arr.tobytes()
        header[name] = {"dtype": _NAME[arr.dtype.str], "shape": list(arr.shape), "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * ((8 - len(hj) % 8) % 8)  # pad so the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)
