#!/bin/sh
# bench/record-telemetry.sh - records real GPU telemetry of a small training loop, at the
# GPU's default settings (this script sets no power limit and locks no clock), as a sample
# for `pfisim import nvidia-smi` / `pfisim import dcgm`.
#
#   bench/record-telemetry.sh OUTDIR [SECONDS]
#
# Writes OUTDIR/nvidia-smi.csv (1 s samples), OUTDIR/dcgmi.txt when dcgmi is installed,
# OUTDIR/idle.csv (10 s before the loop), OUTDIR/gpu.txt (nvidia-smi -q) and
# OUTDIR/train.log. The loop: a 4-layer MLP (hidden 8192, bf16, AdamW) on random data with
# PyTorch, if installed.
set -u
out=${1:?usage: record-telemetry.sh OUTDIR [SECONDS]}
secs=${2:-120}
mkdir -p "$out"
q=timestamp,index,power.draw,power.limit,clocks.sm,utilization.gpu,utilization.memory
nvidia-smi -q > "$out/gpu.txt" 2>&1
nvidia-smi --query-gpu=$q --format=csv -lms 1000 > "$out/idle.csv" 2>&1 &
pid=$!
sleep 10
kill $pid
nvidia-smi --query-gpu=$q --format=csv -lms 1000 > "$out/nvidia-smi.csv" 2>&1 &
smi=$!
dcgm=
if command -v dcgmi >/dev/null 2>&1; then
    dcgmi dmon -e 155,150,1002,1003,1004,1005,1011,1012 -d 1000 > "$out/dcgmi.txt" 2>&1 &
    dcgm=$!
fi
python3 - "$secs" > "$out/train.log" 2>&1 <<'PY'
import sys, time
secs = float(sys.argv[1])
try:
    import torch
except ImportError:
    print("no PyTorch: no training loop"); sys.exit(0)
dev = "cuda"
torch.manual_seed(0)
h = 8192
model = torch.nn.Sequential(*[m for _ in range(4) for m in (torch.nn.Linear(h, h), torch.nn.GELU())]).to(dev, torch.bfloat16)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(8192, h, device=dev, dtype=torch.bfloat16)
steps, t0 = 0, time.time()
while time.time() - t0 < secs:
    loss = model(x).float().pow(2).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    steps += 1
    if steps % 50 == 0:
        torch.cuda.synchronize()
        print(f"{time.time() - t0:.1f} s step {steps} loss {loss.item():.4f}", flush=True)
torch.cuda.synchronize()
el = time.time() - t0
# 4 layers x (forward 2 + backward 4) x batch x h x h flops per step
print(f"steps {steps} in {el:.1f} s, {6 * 4 * 8192 * h * h * steps / el / 1e12:.1f} TFLOP/s")
PY
sleep 3
kill $smi
[ -n "$dcgm" ] && kill "$dcgm"
wc -l "$out"/*.csv
exit 0
