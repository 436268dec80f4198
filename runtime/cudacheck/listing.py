"""Compiler logs shown beside the numbered source lines they point at."""
import re

# g++: "kernel.cu:12:5: error: ..."; NVRTC: "kernel.cu(12): error: ..."
_LOCATION = re.compile(r"^(?P<file>[^\s:()]+)(?::(?P<gline>\d+):(?:\d+:)?|\((?P<nline>\d+)\):)"
                       r"\s*(?P<kind>fatal error|error|warning|note)?:?\s*(?P<msg>.*)$")


def numbered(source, lines, context=2):
    """The source lines around each of `lines` (1-based), numbered, marked with '>'."""
    src = source.splitlines()
    show = set()
    for n in lines:
        show.update(range(max(1, n - context), min(len(src), n + context) + 1))
    out, last = [], 0
    width = len(str(len(src)))
    for n in sorted(show):
        if last and n > last + 1:
            out.append(" " * (width + 3) + "...")
        out.append(f"{'>' if n in lines else ' '} {n:>{width}} | {src[n - 1]}")
        last = n
    return "\n".join(out)


def compile_error_report(source, log, filename, title, max_errors=5):
    """A message with each error of `log` in `filename` (None: any file; NVRTC names a
    temporary one) and the source lines it names."""
    parts, seen = [title], 0
    for raw in log.splitlines():
        m = _LOCATION.match(raw.strip())
        if not m or (filename and m.group("file") != filename) or m.group("kind") not in ("error", "fatal error"):
            continue
        line = int(m.group("gline") or m.group("nline"))
        parts.append(f"\nline {line}: {m.group('msg')}\n{numbered(source, {line})}")
        seen += 1
        if seen == max_errors:
            break
    if seen == 0:
        parts.append("\n" + log.strip())
    return "\n".join(parts)

