"""What the first cell of every chapter calls."""
from .gpu import gpu_available


def setup():
    """Register the %%cuda magic and say where kernels will run; returns the backend."""
    try:
        from IPython import get_ipython
        ip = get_ipython()
    except ImportError:
        ip = None
    if ip is not None:
        from . import magic
        magic.register(ip)
    if gpu_available():
        import cupy
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        print(f"Kernels run on the GPU: {name} (CuPy {cupy.__version__}). Checked mode runs on the CPU runtime.")
        return "gpu"
    print("No GPU here: kernels run on the CPU runtime, which compiles the same CUDA C with a C++ compiler. "
          "Timings shown are the reference GPU measurements stored with the book.")
    return "cpu"
