"""Checked mode's findings, from the JSON a worker reports to the exception a student
reads: what happened, which thread of which block, which element, which source line,
and what to do about it.

Every kind of finding is declared once, in src/kc_findings.def: its name, the exception
it becomes and the fields of its JSON. This package reads that file (KINDS) and decodes a
finding (to_exception) with the decoder named after its kind, which words the message:
memory.py for what an access did (oob, race, async_race, global_race, uninit), execution.py
for how the threads ran (divergence, warp, collective, operand, shared_limit, stall, grid_sync), hopper.py
for the async proxy of Hopper kernels' inline PTX (tile_unwaited, wgmma_overwrite,
tma_store_overwrite, proxy_fence, tx_overflow, warpgroup).

A line a finding names that lies in a function the kernel calls (an inline PTX helper such as
kernels/hopper.cu's mbar_wait, a __device__ function inlined into the kernel) also names the
calls that reach it, from the line table's inline chain at the instruction's offset (pc, and
other_pc, copy_pc, wgmma_pc, store_pc, async_pc, fence_pc, global_fence_pc for the other lines:
LINE_PCS): Context.quote marks it and to_exception words it (Context.quote_calls), as much as
fits a phone; error.calls holds the finding's own chain, ((line, function), ...) from the
kernel's call down to the line.
"""
import json
import re
from dataclasses import dataclass

from ... import errors
from ...frontend import SRC_DIR
from . import execution, hopper, memory

DECLARATIONS = SRC_DIR / "kc_findings.def"


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
        self.chains = {}              # line -> its calls (calls_of), for the finding being read

    def calls_of(self, f, line, key="pc"):
        """The calls that lead to a finding's `line` (the instruction at f[key]), outermost first:
        ((line, function), ...) from the kernel's call of a helper down to `line` in the helper it
        lies in (SourceLines.calls); () where the line is the kernel's own or the place unknown. A
        translated asm's call gives the line table's line, which may be another line of a statement
        spanning several than the instruction's: the finding's line replaces it."""
        if not line or key not in f or not hasattr(self.pc_lines, "calls"):
            return ()
        chain = self.pc_lines.calls(f[key])
        if not chain or abs(chain[-1][0] - line) > 64:
            return ()
        return chain[:-1] + ((line, chain[-1][1]),)

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

    def _quote(self, line, width=None):
        if 1 <= line <= len(self.lines):
            text = self.lines[line - 1].strip()
            if width and len(text) > width:
                text = text[:width - 1].rstrip() + "…"
            return f"\n  line {line}: {text}"
        return ""

    def quote(self, line):
        """The source line, quoted; where it lies in a function the kernel calls (self.chains), a
        mark after it, which quote_calls replaces with the calls that reach it."""
        out = self._quote(line)
        if out and line in self.chains:
            out += CALLS_MARK.format(line)
        return out

    def quote_calls(self, message, first=0):
        """The message with the mark of each quoted line that lies in a function the kernel calls
        replaced by that function and the calls that reach it, innermost first, up to the kernel's,
        then those calls' lines, quoted (shortened to CALL_CHARS):
          line 247: asm volatile("{ .reg .pred p; mbarrier.try_wait...
            in mbar_wait, called from line 571 in consume_tile, 645 in warp_specialized, 672 in matmul_persistent
          line 571: mbar_wait(full0 + 8 * s, (it / STAGES) & 1);
          ...
        A message fits a phone: past the function and its innermost call (always there for the
        finding's own line, `first`), the rest comes as long as the message stays within
        CALLS_BUDGET characters, in this order: the other lines' function and innermost call, the
        outer calls (… where some are left out), the calls' lines quoted, then the lines quote_call
        asked for."""
        marks = {line: CALLS_MARK.format(line) for line in self.chains if CALLS_MARK.format(line) in message}
        order = sorted(marks, key=lambda line: line != first)
        named = {line: [] for line in order}    # the calls named, innermost first
        quoted = {line: [] for line in order}   # their lines quoted
        size = len(message) - sum(len(m) for m in marks.values())

        def fits(text, always=False):
            nonlocal size
            if always or size + len(text) <= CALLS_BUDGET:
                size += len(text)
                return True
            return False
        for line in order:   # the function and its innermost call: the finding's own always
            calls = self.chains[line]
            n, fn = calls[-2]
            if not fits(f"\n    in {calls[-1][1]}, called from line {n} in {fn}", always=line == first):
                break
            named[line].append(n)
        full = True
        for line in order:   # the outer calls, while they fit
            if not named[line] or not full:
                break
            for n, fn in self.chains[line][-3::-1]:
                if not fits(f", {n} in {fn}"):
                    size += len(", …")
                    full = False
                    break
                named[line].append(n)
        for line in order if full else ():   # the calls' lines, quoted, while they fit
            for n in named[line]:
                q = self._quote(n, CALL_CHARS)
                if q in message or any(q in quoted[k] for k in order):
                    continue   # quoted already
                if not fits(q):
                    full = False
                    break
                quoted[line].append(q)
            if not full:
                break
        for line, mark in marks.items():
            text = ""
            if named[line]:
                calls = self.chains[line]
                text = f"\n    in {calls[-1][1]}, called from line " + ", ".join(
                    f"{n} in {fn}" for n, fn in calls[-2::-1][:len(named[line])])
                if len(named[line]) < len(calls) - 1:
                    text += ", …"
            message = message.replace(mark, text + "".join(quoted[line]))
        for n in map(int, re.findall(QUOTE_MARK.format(r"(\d+)"), message)):   # then those quote_call asked for
            q = self._quote(n, CALL_CHARS)
            mark = QUOTE_MARK.format(n)
            ok = len(message) - len(mark) + len(q) <= CALLS_BUDGET and f"\n  line {n}: " not in message
            message = message.replace(mark, q if ok else "", 1).replace(mark, "")
        return message

    def quote_call(self, line):
        """A line that calls a function, quoted (shortened to CALL_CHARS) if the message has room for it
        once the calls are named (quote_calls), and not quoted already."""
        return QUOTE_MARK.format(line) if 1 <= line <= len(self.lines) else ""


CALLS_MARK = "\0calls {}\0"   # where quote_calls names a quoted line's calls
QUOTE_MARK = "\0quote {}\0"   # where it may quote a line that calls a function (quote_call)
CALL_CHARS = 60      # a quoted call's source text at most
CALLS_BUDGET = 1180  # a message's characters at most with the calls named and quoted: it fits a phone
                     # (the course's exercises add up to some 210, the Hopper ones' longer kernel names and
                     # cell ranges included: tests/course/test_exercises.py MESSAGE_CHARS is 1400)


@dataclass(frozen=True)
class Declared:
    """A kind of finding as src/kc_findings.def declares it."""
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


# A finding's lines and the instruction offsets they were found at: the finding's own first.
LINE_PCS = (("line", "pc"), ("other_line", "other_pc"), ("copy_line", "copy_pc"), ("wgmma_line", "wgmma_pc"),
            ("store_line", "store_pc"), ("async_line", "async_pc"), ("fence_line", "fence_pc"),
            ("global_fence_line", "global_fence_pc"))

DECODERS = {kind: _decoder(kind) for kind in KINDS}   # kind -> decoder(finding, Context) -> exception


def to_exception(raw, ctx, arrays=()):
    """The exception a worker's finding (JSON) stands for. `arrays` ((name, address, bytes) of
    the launch's arrays) names memory a finding gives only as an address."""
    f = json.loads(raw)
    kind = f.pop("kind")
    declared = KINDS[kind]
    ctx.chains = {}
    if "pc" in declared.fields:
        f["line"] = ctx.line_of(f)
    if "other_pc" in declared.fields:
        f["other_line"] = ctx.line_of(f, "other_pc")
    # Lines in helpers: the calls that reach them (quote names them; error.calls is the finding's).
    for line_key, pc_key in LINE_PCS:
        if line_key in f and pc_key in f:
            calls = ctx.calls_of(f, f[line_key], pc_key)
            if calls:
                ctx.chains.setdefault(f[line_key], calls)
    ctx.arrays = tuple(arrays)
    error = DECODERS[kind](f, ctx)
    if error.args and isinstance(error.args[0], str) and "\0" in error.args[0]:
        error.args = (ctx.quote_calls(error.args[0], f.get("line", 0)),) + error.args[1:]
    if isinstance(error, errors.CheckError):
        error.calls = ctx.chains.get(f.get("line", 0), ())
    ctx.chains = {}
    return error
