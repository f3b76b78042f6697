#!/usr/bin/env python3
"""PyTorch workload: a loop of float32 matrix products (cuBLAS kernels, whose names
vary with the GPU and the library), with the operands copied in and the result out.
Usage: py_torch.py WORK_JSON (see workload_common.write_work)"""
import sys

from workload_common import expect_close, require, write_work

SIZE = 2048
PRODUCTS = 50


def main(work_path):
    torch = require("torch")
    if not torch.cuda.is_available():
        print("torch.cuda sees no GPU")
        return 1
    # Exact float32 products, so that the result can be checked against the CPU's.
    # PyTorch 2.9 replaced allow_tf32 (deprecated, warning) by fp32_precision.
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        matmul.fp32_precision = "ieee"
    else:
        matmul.allow_tf32 = False
    generator = torch.Generator().manual_seed(1)
    a = torch.randn(SIZE, SIZE, generator=generator)
    b = torch.randn(SIZE, SIZE, generator=generator)
    da, db = a.cuda(), b.cuda()
    product = None
    for _ in range(PRODUCTS):
        product = da @ db
    torch.cuda.synchronize()
    result = product.cpu()
    expect_close("matmul", result.numpy(), (a @ b).numpy(), 1e-3, 1e-2)

    nbytes = SIZE * SIZE * 4
    write_work(work_path, f"torch {torch.__version__}", None, PRODUCTS, 2 * nbytes, nbytes, None)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
