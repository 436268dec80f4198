"""Checked mode's findings are declared once (src/kc_findings.def): the C++ side writes
each kind with exactly its declared fields, the Python side decodes each kind into its
declared exception, and every such exception is exported by cudacheck."""
import re

import cudacheck
from cudacheck import errors
from cudacheck.cpu import compiler, findings

# The runtime's units and checked mode's, one per check (src/kc_check.h), and their headers.
WRITERS = sorted(p for p in findings.DECLARATIONS.parent.glob("kc_*") if p.suffix in (".cpp", ".h"))


def keys(text):
    return set(re.findall(r'\\"(\w+)\\":', text))


def written():
    """(kind, fields) of every place in the C++ sources that writes a finding: the keys of
    the JSON from the finding() call to where the finding is reported or its function ends,
    and those of a function of the same unit it hands the buffer on to (`name(buf, n, k)`)."""
    out = []
    for path in WRITERS:
        text = path.read_text()
        for m in re.finditer(r"Finding::(\w+)", text):
            rest = text[m.end():]
            end = min(i for i in (rest.find("report("), rest.find("_exit("), rest.find("\n}\n")) if i >= 0)
            fields = keys(rest[:end])
            for helper in re.findall(r"(\w+)\(buf, n, k\)", rest[:end]):
                body = text[text.index(f" {helper}(char* buf"):]
                fields |= keys(body[:body.index("\n}\n")])
            out.append((m.group(1), fields))
    return out


def test_every_unit_is_compiled():
    """Each of the runtime's units is compiled and linked (compiler.runtime_objects): a check's
    unit left out would leave its hooks undefined in every checked library."""
    units = {p.name for p in findings.DECLARATIONS.parent.glob("kc_*.cpp")}
    assert units == {*compiler.RUNTIME_UNITS, *compiler.PROGRAM_UNITS, *compiler.MODULE_UNITS, *compiler.CHECK_UNITS}


def test_every_writer_writes_the_declared_fields():
    found = written()
    assert len(found) >= len(findings.KINDS)
    for kind, fields in found:
        declared = findings.KINDS[kind]
        assert fields <= declared.fields, (kind, fields - declared.fields)
        assert declared.required <= fields, (kind, declared.required - fields)


def test_every_kind_is_written_decoded_and_exported():
    assert {kind for kind, _ in written()} == set(findings.KINDS)
    for kind, declared in findings.KINDS.items():
        assert callable(findings.DECODERS.get(kind)), f"no decoder of {kind}"
        # an error ends the run; a warning (same_value) is reported beside its results
        assert issubclass(declared.exception, (errors.KernelError, UserWarning))
        assert getattr(cudacheck, declared.exception.__name__) is declared.exception
        assert declared.exception.__name__ in cudacheck.__all__


def test_every_exception_and_warning_is_exported():
    public = {n for n in dir(errors) if n.endswith(("Error", "Warning"))}
    assert public <= set(cudacheck.__all__)
    assert all(getattr(cudacheck, n) is getattr(errors, n) for n in public)


def test_races_share_a_base_class():
    assert issubclass(cudacheck.SharedMemoryRaceError, cudacheck.RaceError)
    assert issubclass(cudacheck.GlobalMemoryRaceError, cudacheck.RaceError)
    assert issubclass(cudacheck.AsyncCopyRaceError, cudacheck.SharedMemoryRaceError)
    assert not issubclass(cudacheck.GlobalMemoryRaceError, cudacheck.SharedMemoryRaceError)
    # a wgmma's accumulators are registers: a race with the tensor cores, in no memory
    assert issubclass(cudacheck.WgmmaAccumulatorRaceError, cudacheck.RaceError)
    assert not issubclass(cudacheck.WgmmaAccumulatorRaceError, cudacheck.SharedMemoryRaceError)
