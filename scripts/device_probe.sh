#!/usr/bin/env bash
# One-off probe of the GPU machine's tools (run through the device tool); output goes to $OUT.
set -u
{
  nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm --format=csv
  which ncu nvcc compute-sanitizer python3; ncu --version; nvcc --version | tail -1
  python3 --version; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
  ls -d /opt/nvidia/nsight-compute/*/extras/python 2>/dev/null || find / -name ncu_report.py -path '*extras*' 2>/dev/null | head -3
  cat > /tmp/k.cu <<'CU'
#include <cstdio>
__global__ void add(float* a, int n){int i=blockIdx.x*blockDim.x+threadIdx.x; if(i<n) a[i]+=1.f;}
int main(){float* d; cudaMalloc(&d, 1<<20); add<<<1024,256>>>(d, 1<<18); cudaDeviceSynchronize(); printf("ok\n"); return 0;}
CU
  nvcc -arch=sm_90 -o /tmp/k /tmp/k.cu
  echo "--- no kernels (filter)"; ncu --clock-control none -k regex:nomatch /tmp/k; echo "rc=$?"
  echo "--- basic"; /usr/bin/time -f "%e s" ncu --clock-control none --set basic -o /tmp/basic -f /tmp/k 2>&1 | tail -3
  python3 - <<'PY'
import sys, glob
sys.path[:0] = glob.glob('/opt/nvidia/nsight-compute/*/extras/python')
import ncu_report
c = ncu_report.load_report('/tmp/basic.ncu-rep'); a = c.range_by_idx(0).action_by_idx(0)
print('ncu_report ok', a.name(), len(a.metric_names()))
PY
} 2>&1 | tee $OUT/probe.txt
