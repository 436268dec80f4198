"""Run every wrong kernel of tiling_course.corpus once on the GPU, unchecked, on the inputs of
WrongKernel.inputs(np.random.default_rng(0)), and store the products in
course/tiling_course/data/wrong-results.json (a run of outputs of the one measurement model,
tiling_course.measure.model), so that the site (built without a GPU) can show where
each goes wrong on a real GPU. Run on a GPU machine:

    python scripts/record_wrong_results.py
"""
import datetime
import platform
from pathlib import Path

import numpy as np

import cudacheck
from tiling_course import corpus
from tiling_course.measure import model

# The repository's copy, which the course package ships (corpus.stored_gpu_result reads it).
OUT = Path(__file__).resolve().parent.parent / "course" / "tiling_course" / "data" / "wrong-results.json"


def main():
    import cupy
    results = {}
    for name, bug in corpus.WRONG.items():
        try:
            _, _, P = bug.run(backend="gpu", check=False, rng=np.random.default_rng(0))
            results[name] = np.round(cupy.asnumpy(P).astype(np.float64), 6).tolist()
        except cudacheck.GPUContextError as e:   # an illegal address: later launches would fail too
            print(f"{name}: {type(e).__name__}; stopping here")
            break
    props = cupy.cuda.runtime.getDeviceProperties(0)
    rt = cupy.cuda.runtime.runtimeGetVersion()
    meta = model.Meta(device=props["name"].decode(),
                      date=datetime.datetime.now(datetime.timezone.utc).isoformat()[:19] + "Z",
                      command="python scripts/record_wrong_results.py",
                      software={"cuda_runtime": f"{rt // 1000}.{rt % 1000 // 10}", "cupy": cupy.__version__,
                                "python": platform.python_version()},
                      extra={"inputs": "WrongKernel.inputs(numpy.random.default_rng(0))",
                             "what": "P of each wrong kernel of chapters 3 and 4, run unchecked on the GPU "
                                     "(rounded to 6 decimals)"})
    model.write(model.Run("outputs", meta, tuple(model.Record(kernel=name, shape=None, ok=True, extra={"P": P})
                                                 for name, P in results.items())), OUT)
    print(f"wrote {OUT} with {len(results)} results from {meta.device}")


if __name__ == "__main__":
    main()
