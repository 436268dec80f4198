"""What the first cell of every chapter calls."""
from cudacheck import gpu_available

# The classic Jupyter Notebook highlights a cell by the first line's magic when it is
# told which CodeMirror mode belongs to it: C for %%cuda. JupyterLab, Notebook 7 and
# Colab highlight magic cells as Python whatever a kernel says (only a frontend
# extension could change that), and the static site uses book/_ext/cuda_cells.py; there
# the script finds no `IPython.CodeCell` and does nothing.
_HIGHLIGHT_CUDA_CELLS = """
if (window.IPython && IPython.CodeCell && IPython.CodeCell.options_default) {
    IPython.CodeCell.options_default.highlight_modes['magic_text/x-c++src'] = {'reg': [/^%%cuda/]};
    if (IPython.notebook) {
        IPython.notebook.get_cells().forEach(function (c) { if (c.auto_highlight) { c.auto_highlight(); } });
    }
}
"""


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
        if getattr(ip, "kernel", None) is not None:   # a notebook, not a plain IPython shell
            from IPython.display import Javascript, display
            display(Javascript(_HIGHLIGHT_CUDA_CELLS))
    if gpu_available():
        import cupy
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        print(f"Kernels run on the GPU: {name} (CuPy {cupy.__version__}). Checked mode runs on the CPU runtime.")
        return "gpu"
    print("No GPU here: kernels run on the CPU runtime, which compiles the same CUDA C with a C++ compiler. "
          "Timings shown are the reference GPU measurements stored with the book.")
    return "cpu"
