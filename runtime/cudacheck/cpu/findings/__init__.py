"""Checked mode's findings, from the JSON a worker reports to the exception a student
reads: what happened, which thread of which block, which element, which source line,
and what to do about it.

Every kind of finding is declared once, in include/kc_findings.def: its name, the exception
it becomes and the fields of its JSON. This package reads that file (KINDS) and decodes a
finding (to_exception) with the decoder named after its kind, which words the message:
memory.py for what an access did (oob, race, async_race, global_race, uninit), execution.py
for how the threads ran (divergence, warp, collective, operand, shared_limit, stall), hopper.py
for the async proxy of Hopper kernels' inline PTX (tile_unwaited, wgmma_overwrite,
tma_store_overwrite, tx_overflow, warpgroup).
"""
import json
import re
from dataclasses import dataclass

from ... import errors
from ...frontend import INCLUDE_DIR
from . import execution, hopper, memory

DECLARATIONS = INCLUDE_DIR / "kc_findings.def"


def coords(linear, dims):
    x, y, _ = dims
    return (linear % x, (linear // x) % y, linear // (x * y))


class Context:
    """What a finding is read against: the kernel, the launch and the source."""

    def __init__(self, kernel, config, source, pc_lines=None, program=None):
        self.kernel, self.config = kernel, config
        self.arrays = ()              # the launch's (name, address, bytes), set as a finding is read
        self.lines = source.splitlines()
        self.pc_lines = pc_lines      # instruction offsets -> source lines (checked mode)
        self.program = program

    def line_of(self, f, key="pc"):
        """The source line of a finding's access: from the instrumentation when it knew it,
        otherwise from the instruction's place in the library."""
        if key == "pc" and f.get("line"):
            return f["line"]
        if self.pc_lines is None or key not in f:
            return 0
        return self.pc_lines([f[key]])[0]

    def thread(self, linear):
        return coords(linear, self.config.block)

    def block(self, linear):
        return coords(linear, self.config.grid)

    def element_size(self, name):
        """Bytes per element of pointer parameter `name` as declared, or None."""
        for p in self.kernel.params:
            if p.name == name and p.pointer and p.dtype is not None:
                return p.dtype.itemsize * p.lanes
        return None

    def quote(self, line):
        if 1 <= line <= len(self.lines):
            return f"\n  line {line}: {self.lines[line - 1].strip()}"
        return ""


@dataclass(frozen=True)
class Declared:
    """A kind of finding as include/kc_findings.def declares it."""
    kind: str
    exception: type      # what its decoder raises (or a subclass)
    fields: frozenset    # every field its JSON may carry
    required: frozenset  # those every one carries


def declarations(path=DECLARATIONS):
    """The kinds of finding, by kind, from the one declaration the C++ side compiles too."""
    out = {}
    for kind, exception, fields in re.findall(r'^KC_FINDING\((\w+), (\w+), "([^"]*)"\)', path.read_text(), re.M):
        names = fields.split()
        out[kind] = Declared(kind, getattr(errors, exception), frozenset(n.rstrip("?") for n in names),
                             frozenset(n for n in names if not n.endswith("?")))
    return out


KINDS = declarations()


def _decoder(kind):
    found = [m for m in (memory, execution, hopper) if callable(getattr(m, kind, None))]
    if len(found) != 1:
        raise ImportError(f"kc_findings.def declares the finding `{kind}`: one module of cudacheck.cpu.findings "
                          f"(memory.py, execution.py or hopper.py) decodes it, in a function of that name; "
                          f"found {len(found)}")
    return getattr(found[0], kind)


DECODERS = {kind: _decoder(kind) for kind in KINDS}   # kind -> decoder(finding, Context) -> exception


def to_exception(raw, ctx, arrays=()):
    """The exception a worker's finding (JSON) stands for. `arrays` ((name, address, bytes) of
    the launch's arrays) names memory a finding gives only as an address."""
    f = json.loads(raw)
    kind = f.pop("kind")
    declared = KINDS[kind]
    if "pc" in declared.fields:
        f["line"] = ctx.line_of(f)
    if "other_pc" in declared.fields:
        f["other_line"] = ctx.line_of(f, "other_pc")
    ctx.arrays = tuple(arrays)
    return DECODERS[kind](f, ctx)
