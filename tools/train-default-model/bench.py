"""Quick CPU benchmark to pick the training setup: fp32 matmul GFLOP/s (and its error vs float64), then
training-step throughput of the default geometry in fp32 and with bf16 autocast. Run it once per
environment variant, e.g. `OPENBLAS_CORETYPE=SkylakeX python3 bench.py`."""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model import DebertaV2ForMaskedLM  # noqa: E402
from train import default_config  # noqa: E402


def matmul(n=1024, reps=10):
    a, b = torch.randn(n, n), torch.randn(n, n)
    err = ((a @ b).double() - a.double() @ b.double()).abs().max().item()
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    dt = time.perf_counter() - t
    return 2 * n ** 3 * reps / dt / 1e9, err


def steps(bf16, bs=32, n=6):
    torch.manual_seed(0)
    cfg = default_config(8000)
    m = DebertaV2ForMaskedLM(cfg)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4)
    ids = torch.randint(4, 8000, (bs, 128))
    pos = torch.randperm(bs * 128)[: bs * 19]
    labels = ids.reshape(-1)[pos]
    times = []
    for _ in range(n):
        t = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits = m(ids, positions=pos)
        loss = F.cross_entropy(logits.float(), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t)
    best = min(times[1:])
    return bs * 128 / best, loss.item()


if __name__ == "__main__":
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    g, err = matmul()
    out = {"OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"), "matmul_gflops": round(g, 1),
           "matmul_maxerr_vs_f64": err}
    for bf16 in (False, True):
        tps, loss = steps(bf16)
        out["bf16" if bf16 else "fp32"] = {"tokens_per_s": round(tps), "loss": round(loss, 4)}
    print(json.dumps(out))
