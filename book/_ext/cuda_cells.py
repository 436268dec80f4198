"""Sphinx extension: highlight a notebook cell that starts with %%cuda as CUDA C.

Notebook code cells are highlighted with the kernel's lexer (ipython3), which would
colour a kernel cell as Python. This lexer hands everything after a %%cuda line to
Pygments' CUDA lexer and leaves other cells to IPython's."""
from IPython.lib.lexers import IPython3Lexer
from pygments.lexer import Lexer
from pygments.lexers import CudaLexer
from pygments.token import Keyword


class NotebookCellLexer(Lexer):
    name = "IPython3 with %%cuda cells"
    aliases = ["ipython3"]

    def get_tokens_unprocessed(self, text):
        if text.lstrip().startswith("%%cuda"):
            first, _, rest = text.lstrip().partition("\n")
            yield 0, Keyword, first + "\n"
            for i, token, value in CudaLexer(stripnl=False).get_tokens_unprocessed(rest):
                yield i + len(first) + 1, token, value
        else:
            yield from IPython3Lexer(stripnl=False).get_tokens_unprocessed(text)


def setup(app):
    app.add_lexer("ipython3", NotebookCellLexer)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
