"""Rodinia 3.1's CUDA programs, whole and as written, on the CPU runtime against an H100.

For each of the suite's 24 CUDA programs, the table PROGRAMS below names its own source files and
build recipe as its Makefile has them (which units, compiled as C, C++ or CUDA; the flags that
change what it computes), its arguments and small inputs, which this script writes (the suite's
data/ directory is a separate download of gigabytes; the inputs here have the formats its
readers expect). Each program runs on the CPU runtime (cudacheck.run_program) plain and in
checked mode, in a working directory laid out as the suite's own (cuda/<program>/ beside
data/<program>/, since some programs open ../../data/... by a fixed path), and what it printed
and the files it wrote are compared with the GPU's.

The GPU's outputs are recorded once, on a machine with nvcc and a GPU (--record-gpu OUT.json):
each unit is compiled as the program's Makefile does (.c with gcc, .cpp with g++, .cu with nvcc),
for sm_90 in place of the Makefile's obsolete architectures (sm_13, sm_20, compute_20), and linked
with nvcc. Not part of `make test`: it needs the suite, which is not in this repository.

Getting the suite (the commit this script was written against):

    git clone https://github.com/yuhc/gpu-rodinia /tmp/rodinia
    git -C /tmp/rodinia checkout 9c10d3ea16ddba2ba057cc3951a9efc4c2cc18a4

Running it (RODINIA_DIR is the clone, or any folder holding its cuda/ and common/):

    python scripts/rodinia_scorecard.py /tmp/rodinia --record-gpu gpu.json     # on a GPU, once
    python scripts/rodinia_scorecard.py /tmp/rodinia --gpu gpu.json --json cpu.json --jobs 2
    python scripts/rodinia_scorecard.py /tmp/rodinia --gpu gpu.json --cpu-json cpu.json   # tabulate only

Comparison. A program's output is its stdout, less the lines that report a time (TIMING_LINE:
they differ from run to run on any machine) or name the device (MACHINE_LINE), and the files
named in its `outputs`. A mode passes when both are byte for byte the GPU's; `differs` names
the first line that is not; an error is the KernelError class and its message's first line.
Without a GPU record the CPU's two modes are compared with each other only (`plain==checked`).
Programs whose inputs are seeded by the clock (srand(time(NULL))) are run, not compared.

Programs that need what neither machine has (a video the suite ships only in its data download,
a matrix library built by its own Makefile) or that nvcc 13 refuses (texture references, gone
from CUDA 13) are listed in the table with why, and not run.

The CUDA 13 toolkit has no cudaThreadSynchronize or cudaThreadExit (deprecated since CUDA 4,
replaced by cudaDeviceSynchronize and cudaDeviceReset): nvcc 13 refuses them and so does the CPU
runtime, naming the replacement. With --substitute, and always for the GPU record, this script
applies that one documented substitution to the source it compiles, and says so in the table.
"""
import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

# A line that reports a time: it differs between any two runs, GPU or CPU.
TIMING_LINE = re.compile(r"(?i)\btime|timing|elapsed|\bsec(ond)?s?\b|\bms\b|GB/s|throughput|\btook\b|"
                         r"^(Init|MemAlloc|HtoD|Exec|DtoH|Close|Total):|^\s*[\d.]+ s\b")
# A line that describes the machine (gaussian prints the device's properties): the CPU
# runtime reports an H100's numbers, but names itself in the device's name.
MACHINE_LINE = re.compile(r"(?i)device name|^Using device \d+:")
# CUDA 4's names, gone from CUDA 13, and what replaced them (CUDA Runtime API, "Deprecated List").
SUBSTITUTIONS = {"cudaThreadSynchronize": "cudaDeviceSynchronize", "cudaThreadExit": "cudaDeviceReset"}


@dataclass
class Program:
    name: str
    folder: str                      # under cuda/
    units: list = field(default_factory=list)    # compiled separately, as the Makefile does
    args: list = field(default_factory=list)
    flags: list = field(default_factory=list)    # nvcc's (and the CPU runtime's) -D, -I, -use_fast_math
    inputs: object = None            # inputs(workdir, datadir): writes the program's input files
    outputs: list = field(default_factory=list)  # files it writes, compared with the GPU's
    skip: str = ""                   # why it is not run
    note: str = ""
    seeded_by_clock: bool = False    # its random numbers come from time(0): its output is not compared
    # A host bug that prints bytes the program never wrote (past the end of an unterminated
    # buffer), where. They are whatever the host heap held, on any machine: a GPU line may begin
    # with bytes the CPU run's line lacks, and is equal if it ends with the CPU run's line.
    unterminated: str = ""


def _rng(name):
    return random.Random(int(hashlib.sha256(name.encode()).hexdigest()[:8], 16))


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def bfs_graph(work, data):
    """bfs.cu's format: node count; per node its first edge and edge count; the source; the
    edge count; per edge its destination and cost."""
    rng, n = _rng("bfs"), 4096
    edges = [[rng.randrange(n) for _ in range(rng.randint(1, 6))] for _ in range(n)]
    lines, first = [str(n)], 0
    for e in edges:
        lines.append(f"{first} {len(e)}")
        first += len(e)
    lines += ["", "0", "", str(first)] + [f"{d} {rng.randint(1, 10)}" for e in edges for d in e]
    _write(work / "graph4096.txt", "\n".join(lines) + "\n")


def grid_values(name, count, low, high):
    rng = _rng(name)
    return "".join(f"{rng.uniform(low, high):.6f}\n" for _ in range(count))


def hotspot_files(work, data):
    _write(work / "temp_64", grid_values("hotspot-temp", 64 * 64, 323.0, 343.0))
    _write(work / "power_64", grid_values("hotspot-power", 64 * 64, 0.0, 0.01))


def hotspot3d_files(work, data):
    _write(work / "power_64x8", grid_values("hotspot3d-power", 64 * 64 * 8, 0.0, 0.01))
    _write(work / "temp_64x8", grid_values("hotspot3d-temp", 64 * 64 * 8, 323.0, 343.0))


def cfd_domain(work, data):
    """euler3d.cu's format: element count; per element its area, then per neighbour (4) its
    index (1-based; negative for a wall or the far field) and face normal."""
    rng, n = _rng("cfd"), 2048
    lines = [str(n)]
    for i in range(n):
        row = [f"{rng.uniform(1e-4, 1e-3):.8g}"]
        for j in range(4):
            neighbour = (i + (1, -1, 64, -64)[j]) % n + 1 if rng.random() > 0.05 else -1
            row += [str(neighbour)] + [f"{rng.uniform(-1e-3, 1e-3):.8g}" for _ in range(3)]
        lines.append(" ".join(row))
    _write(work / "domain2k", "\n".join(lines) + "\n")


def btree_files(work, data):
    """main.c's format: a count, then the keys; the commands `k count` (find keys) and `j count
    range` (range queries)."""
    rng, n = _rng("b+tree"), 10000
    _write(work / "mil.txt", f"{n}\n" + "".join(f"{rng.randrange(1, 10 * n)}\n" for _ in range(n)))
    _write(work / "command.txt", "j 256 100\nk 256\n")


def nn_files(work, data):
    """hurricane_gen.c's record format (fixed-width lines), in four files the list names."""
    rng = _rng("nn")
    names = ["ALBERTO", "BERYL", "CHRIS", "DEBBY", "ERNESTO", "FLORENCE", "GORDON", "HELENE"]
    listed = []
    for f in range(4):
        lines = []
        for _ in range(1024):
            lines.append(f"{1950 + rng.randrange(55):4d} {1 + rng.randrange(12):2d} {1 + rng.randrange(28):2d} "
                         f"{rng.choice((0, 6, 12, 18)):2d} {1 + rng.randrange(28):2d} {rng.choice(names):<9s} "
                         f"{7 + rng.randrange(63) + rng.random():5.1f} {rng.randrange(358) + rng.random():5.1f} "
                         f"{10 + rng.randrange(155):4d} {rng.randrange(900):4d}")
        _write(work / f"cane4_{f}.db", "\n".join(lines) + "\n")
        listed.append(f"cane4_{f}.db")
    _write(work / "filelist_4", "\n".join(listed) + "\n")


def srad_image(work, data):
    """graphics.c reads a PGM's three header lines, then its values row by row."""
    rng = _rng("srad")
    rows = [" ".join(str(rng.randrange(256)) for _ in range(64)) for _ in range(64)]
    _write(data / "srad" / "image.pgm", "P2\n64 64\n255\n" + "\n".join(rows) + "\n")


def huffman_data(work, data):
    """Bytes of a skewed distribution (the encoder's symbols are bytes), 64 KiB."""
    rng = _rng("huffman")
    weights = [2.0 ** -(i % 12) for i in range(256)]
    (work / "test64k.in").write_bytes(bytes(rng.choices(range(256), weights, k=65536)))


def dwt_image(work, data):
    """A 256x256 24-bit BMP (dwt2d reads BMP's header, then its BGR rows), where dwt2d opens its
    input: data/dwt2d/."""
    rng, w, h = _rng("dwt2d"), 256, 256
    pixels = bytes(rng.randrange(256) for _ in range(w * h * 3))
    header = (b"BM" + (54 + len(pixels)).to_bytes(4, "little") + bytes(4) + (54).to_bytes(4, "little")
              + (40).to_bytes(4, "little") + w.to_bytes(4, "little") + h.to_bytes(4, "little")
              + (1).to_bytes(2, "little") + (24).to_bytes(2, "little") + bytes(4)
              + len(pixels).to_bytes(4, "little") + bytes(16))
    (data / "dwt2d").mkdir(parents=True, exist_ok=True)
    (data / "dwt2d" / "rgb.bmp").write_bytes(header + pixels)


TEXTURE_REFERENCES = ("uses texture references (texture<...> and cudaBindTexture), which CUDA 12 removed: "
                      "nvcc 13 refuses them")
PROGRAMS = [
    Program("b+tree", "b+tree", ["main.c", "kernel/kernel_gpu_cuda_wrapper.cu", "kernel/kernel_gpu_cuda_wrapper_2.cu",
                                 "util/timer/timer.c", "util/num/num.c", "util/cuda/cuda.cu"],
            ["file", "mil.txt", "command", "command.txt"], inputs=btree_files, outputs=["output.txt"],
            unterminated="that main.c:1952 prints after commandBuffer (fread's bytes, with no 0 after them)"),
    Program("backprop", "backprop", ["backprop.c", "facetrain.c", "imagenet.c", "backprop_cuda.cu"], ["65536"]),
    Program("bfs", "bfs", ["bfs.cu"], ["graph4096.txt"], ["-I../util", "-DTIMING"], bfs_graph, ["result.txt"]),
    # The Makefile's -I$(SDK_DIR)/common/inc: the CUDA samples' helper headers, which the toolkit no
    # longer ships; the suite's own copy of them is hybridsort's.
    Program("cfd", "cfd", ["euler3d.cu"], ["domain2k"], ["-I../hybridsort"], cfd_domain,
            ["density", "momentum", "density_energy"]),
    Program("dwt2d", "dwt2d", ["main.cu", "dwt.cu", "components.cu", "dwt_cuda/fdwt53.cu", "dwt_cuda/fdwt97.cu",
                               "dwt_cuda/common.cu", "dwt_cuda/rdwt97.cu", "dwt_cuda/rdwt53.cu"],
            ["rgb.bmp", "-d", "256x256", "-f", "-5", "-l", "3"], ["-I."], dwt_image,
            ["rgb.bmp.dwt.r", "rgb.bmp.dwt.g", "rgb.bmp.dwt.b"]),
    Program("gaussian", "gaussian", ["gaussian.cu"], ["-s", "16"]),
    Program("heartwall", "heartwall", ["main.cu", "AVI/avilib.c", "AVI/avimod.c"],
            skip="reads a video (test.avi) that the suite ships only in its data download"),
    Program("hotspot", "hotspot", ["hotspot.cu"], ["64", "2", "2", "temp_64", "power_64", "output.out"],
            inputs=hotspot_files, outputs=["output.out"]),
    Program("hotspot3D", "hotspot3D", ["3D.cu"], ["64", "8", "10", "power_64x8", "temp_64x8", "output.out"],
            ["-g", "-G"], hotspot3d_files, ["output.out"]),
    Program("huffman", "huffman", ["main_test_cu.cu", "stats_logger.cpp", "vlc_kernel_sm64huff.cu", "scan.cu",
                                   "pack_kernels.cu", "cpuencode.cpp"],
            ["test64k.in"], ["-O3", "-g", "-G"], huffman_data),
    Program("hybridsort", "hybridsort", ["bucketsort.cu", "mergesort.cu", "main.cu"], ["r"],
            skip="includes OpenGL's GL/glew.h, and " + TEXTURE_REFERENCES),
    Program("kmeans", "kmeans", ["cluster.c", "getopt.c", "kmeans.c", "kmeans_clustering.c", "kmeans_cuda.cu",
                                 "rmse.c"], skip=TEXTURE_REFERENCES),
    Program("lavaMD", "lavaMD", ["main.c", "kernel/kernel_gpu_cuda_wrapper.cu", "util/num/num.c",
                                 "util/timer/timer.c", "util/device/device.cu"],
            ["-boxes1d", "2"], ["-DOUTPUT"], outputs=["result.txt"], seeded_by_clock=True),
    Program("leukocyte", "leukocyte/CUDA", skip="reads a video (testfile.avi) that the suite ships only in its data "
            "download, and links the meschach matrix library its Makefile builds"),
    Program("lud", "lud/cuda", ["lud.cu", "lud_kernel.cu", "../common/common.c"], ["-s", "64", "-v"],
            ["-I../common", "-O3", "-use_fast_math", "-DGPU_TIMER"]),
    Program("mummergpu", "mummergpu/src", ["mummergpu.cu", "mummergpu_gold.cpp", "suffix-tree.cpp", "PoolMalloc.cpp"],
            skip=TEXTURE_REFERENCES),
    Program("myocyte", "myocyte", ["main.cu"], ["100", "1", "0"],
            skip="reads its initial state and parameters (data/myocyte/y.txt, params.txt), which the suite ships "
                 "only in its data download"),
    Program("nn", "nn", ["nn_cuda.cu"], ["filelist_4", "-r", "5", "-lat", "30", "-lng", "90"], inputs=nn_files),
    Program("nw", "nw", ["needle.cu"], ["64", "10"], outputs=["result.txt"]),
    Program("particlefilter", "particlefilter", ["ex_particle_CUDA_float_seq.cu"],
            ["-x", "32", "-y", "32", "-z", "5", "-np", "256"], ["-O3", "-use_fast_math"], seeded_by_clock=True),
    Program("pathfinder", "pathfinder", ["pathfinder.cu"], ["1000", "20", "5"]),
    Program("srad_v1", "srad/srad_v1", ["main.cu"], ["2", "0.5", "64", "64"], ["-O3"], srad_image,
            ["image_out.pgm"]),
    Program("srad_v2", "srad/srad_v2", ["srad.cu"], ["64", "64", "0", "31", "0", "31", "0.5", "2"]),
    Program("streamcluster", "streamcluster", ["streamcluster_cuda_cpu.cpp", "streamcluster_cuda.cu",
                                               "streamcluster_header.cu"],
            ["10", "20", "16", "1024", "1024", "100", "none", "output.txt", "1"], ["-O3"], outputs=["output.txt"]),
]
BY_NAME = {p.name: p for p in PROGRAMS}


def workdir(rodinia, program, into, substitute):
    """A copy of the program's folder at into/cuda/<folder> (with the suite's common/ and the
    folders it includes from), its inputs written; returns the folder."""
    work = into / "cuda" / program.folder
    # its folder, the suite's shared ones, and the folders its -I options name (lud's ../common,
    # cfd's ../hybridsort)
    named = [work / f[2:] for f in program.flags if f.startswith("-I")]
    for part in ("cuda/util", "common", f"cuda/{program.folder}",
                 *(os.path.relpath(os.path.normpath(p), into) for p in named)):
        if (rodinia / part).is_dir():
            shutil.copytree(rodinia / part, into / part, dirs_exist_ok=True)
    if substitute:
        for path in work.rglob("*"):
            if path.suffix in (".c", ".cu", ".cpp", ".h", ".cuh") and path.is_file():
                text = path.read_text(errors="replace")
                new = re.sub(r"\b(" + "|".join(SUBSTITUTIONS) + r")\b", lambda m: SUBSTITUTIONS[m.group(1)], text)
                if new != text:
                    path.write_text(new)
    if program.inputs:
        program.inputs(work, into / "data")
    return work


def compared_lines(stdout):
    """The lines of stdout that are compared: less those that report a time or name the device."""
    return [line for line in stdout.splitlines() if not TIMING_LINE.search(line) and not MACHINE_LINE.search(line)]


def observed(stdout, work, program):
    """What is compared: stdout (its compared_lines) and each output file's digest."""
    lines = compared_lines(stdout)
    files = {}
    for name in program.outputs:
        path = work / name
        files[name] = hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None
    return {"stdout": "\n".join(lines), "files": files}


def cpu_run(name, mode, rodinia, substitute, time_limit):
    """One program in one mode on the CPU runtime (this is a child process of the script)."""
    import cudacheck  # here only: the GPU record needs nvcc, not cudacheck
    program = BY_NAME[name]
    with tempfile.TemporaryDirectory(prefix=f"rodinia-{name}-") as tmp:
        work = workdir(rodinia, program, Path(tmp), substitute)
        units = {unit: (work / unit).read_text(errors="replace") for unit in program.units}
        source = units[program.units[0]] if len(units) == 1 else units
        try:
            result = cudacheck.run_program(source, backend="cpu", check=mode == "checked", args=program.args,
                                           options=program.flags, time_limit=time_limit, cwd=str(work))
        except (cudacheck.KernelError, ValueError) as e:   # ValueError: a build run_program does not take
            lines = [line for line in str(e).splitlines() if line.strip()]
            # the first line, and a compile error's first `line N: ...`, which names what is wrong
            where = next((line for line in lines[1:] if re.match(r"line \d+: ", line)), "")
            return {"outcome": type(e).__name__, "message": " ".join(filter(None, lines[:1] + [where]))}
        out = observed(result.stdout, work, program)
        out.update(outcome="ran", exit_code=result.exit_code)
        return out


def gpu_record(program, rodinia, timeout):
    """Build as the Makefile does, for sm_90, and run on the GPU."""
    with tempfile.TemporaryDirectory(prefix=f"rodinia-gpu-{program.name}-") as tmp:
        work = workdir(rodinia, program, Path(tmp), substitute=True)
        objects = []
        for i, unit in enumerate(program.units):
            obj = f"unit{i}.o"
            includes = [f for f in program.flags if f.startswith(("-I", "-D"))]
            if unit.endswith(".c") and not program.name == "lud":   # lud's Makefile compiles .c with nvcc
                cmd = ["gcc", "-O2", *includes, "-c", unit, "-o", obj]
            elif unit.endswith(".cpp") and program.name != "streamcluster":
                cmd = ["g++", "-O2", *includes, "-c", unit, "-o", obj]
            else:
                cmd = ["nvcc", "-arch=sm_90", *program.flags, "-c", unit, "-o", obj]
            try:
                proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return {"outcome": "timeout", "message": f"{' '.join(cmd)}: over {timeout} s"}
            if proc.returncode:
                return {"outcome": "build-error", "message": " ".join(cmd) + ": " + proc.stderr.strip()[:2000]}
            objects.append(obj)
        proc = subprocess.run(["nvcc", "-arch=sm_90", *objects, "-o", "program", "-lm"], cwd=work,
                              capture_output=True, text=True, timeout=timeout)
        if proc.returncode:
            return {"outcome": "link-error", "message": proc.stderr.strip()[:2000]}
        try:
            proc = subprocess.run(["./program", *program.args], cwd=work, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"outcome": "timeout", "message": f"over {timeout} s"}
        out = observed(proc.stdout.decode(errors="replace"), work, program)
        out.update(outcome="ran", exit_code=proc.returncode)
        return out


def compare(run, reference, program=None):
    """pass / differs (with the first differing line) / the error, against a reference run."""
    if run["outcome"] != "ran":
        return f"{run['outcome']}: {run['message'][:160]}"
    if reference is None:
        return "ran"
    if program is not None and program.seeded_by_clock:
        return f"ran (exit code {run['exit_code']}; its inputs are seeded by the clock: not compared)"
    if reference["outcome"] != "ran":
        return "ran (GPU: " + reference["outcome"] + ")"
    if run["exit_code"] != reference["exit_code"]:
        return f"differs: exit code {run['exit_code']}, GPU {reference['exit_code']}"
    mine, theirs = compared_lines(run["stdout"]), compared_lines(reference["stdout"])
    for i, (a, b) in enumerate(zip(mine + [""] * len(theirs), theirs + [""] * len(mine))):
        if a != b and not (program is not None and program.unterminated and a and b.endswith(a)):
            return f"differs: stdout line {i + 1}: {a[:80]!r}, GPU {b[:80]!r}"
    for name, digest in reference["files"].items():
        if run["files"].get(name) != digest:
            return f"differs: {name}"
    unequal = program is not None and program.unterminated and mine != theirs
    return f"pass, but for the heap bytes {program.unterminated}" if unequal else "pass"


def run_child(name, mode, args):
    """A program's CPU run in a child process of its own: its compile and its run together
    bounded by --timeout, whatever either does."""
    cmd = [sys.executable, __file__, str(args.rodinia), "--child", name, mode, "--time-limit", str(args.time_limit)]
    if args.substitute:
        cmd.append("--substitute")
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"outcome": "timeout", "message": f"compile and run took over {args.timeout} s"}, args.timeout
    seconds = time.monotonic() - started
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1]), seconds
    except (IndexError, json.JSONDecodeError):
        return {"outcome": "script-error", "message": (proc.stderr.strip().splitlines() or ["?"])[-1]}, seconds


def table(results, gpu):
    rows = ["| program | CPU plain | CPU checked | plain s | checked s |", "|---|---|---|---|---|"]
    for p in (p for p in PROGRAMS if p.name in results):
        if p.skip:
            rows.append(f"| {p.name} | not run: {p.skip} | | | |")
            continue
        r = results[p.name]
        reference = gpu.get(p.name) if gpu else None
        cells = []
        for mode in ("plain", "checked"):
            verdict = compare(r[mode], reference, p)
            if reference is None and verdict == "ran" and mode == "checked" and r["plain"]["outcome"] == "ran" \
                    and not p.seeded_by_clock:
                verdict = "ran, plain==checked" if compare(r["checked"], r["plain"]) == "pass" else \
                    "ran, " + compare(r["checked"], r["plain"]).replace("GPU", "plain")
            cells.append(verdict.replace("|", "\\|"))
        rows.append(f"| {p.name} | {cells[0]} | {cells[1]} | {r['plain_s']:.0f} | {r['checked_s']:.0f} |")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rodinia", type=Path, help="the suite: a folder holding its cuda/ and common/")
    parser.add_argument("--record-gpu", metavar="OUT.json",
                        help="build with nvcc and run on the GPU; write the outputs")
    parser.add_argument("--gpu", metavar="GPU.json", help="a --record-gpu file to compare the CPU runs with")
    parser.add_argument("--json", metavar="OUT.json", help="write the CPU runs here")
    parser.add_argument("--cpu-json", metavar="CPU.json", help="the CPU runs of an earlier --json: tabulate them "
                        "(against --gpu) without running anything")
    parser.add_argument("--jobs", type=int, default=1, help="programs run at once (default 1)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these programs only")
    parser.add_argument("--substitute", action="store_true",
                        help="replace cudaThreadSynchronize/cudaThreadExit, gone from CUDA 13, by their replacements")
    parser.add_argument("--time-limit", type=float, default=120.0, help="a program's run, seconds (default 120)")
    parser.add_argument("--timeout", type=float, default=900.0, help="compile and run together, seconds (default 900)")
    parser.add_argument("--child", nargs=2, metavar=("NAME", "MODE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not (args.rodinia / "cuda").is_dir():
        parser.error(f"{args.rodinia} has no cuda/ folder: pass the Rodinia checkout (its cuda/ and common/)")
    args.rodinia = args.rodinia.resolve()
    if args.child:
        print(json.dumps(cpu_run(args.child[0], args.child[1], args.rodinia, args.substitute, args.time_limit)))
        return
    unknown = sorted(set(args.only or ()) - set(BY_NAME))
    if unknown:
        parser.error(f"no program {', '.join(unknown)}; the programs are {', '.join(BY_NAME)}")
    chosen = [p for p in PROGRAMS if not p.skip and (not args.only or p.name in args.only)]
    if args.record_gpu:
        if shutil.which("nvcc") is None:
            parser.error("--record-gpu builds with nvcc, and there is no nvcc on PATH (add /usr/local/cuda/bin)")
        record = {}
        with cf.ThreadPoolExecutor(args.jobs) as pool:   # builds side by side; one GPU runs them all
            for p, run in zip(chosen, pool.map(lambda p: gpu_record(p, args.rodinia, args.timeout), chosen)):
                record[p.name] = run
                print(p.name, run["outcome"], run.get("message", "")[:300], flush=True)
        Path(args.record_gpu).write_text(json.dumps(record, indent=1))
        return
    gpu = json.loads(Path(args.gpu).read_text()) if args.gpu else None
    if args.cpu_json:
        recorded = json.loads(Path(args.cpu_json).read_text())
        print(table({**{p.name: recorded[p.name] for p in chosen if p.name in recorded},
                     **{p.name: None for p in PROGRAMS if p.skip}}, gpu))
        return
    results = {p.name: {} for p in chosen}
    jobs = [(p.name, mode) for p in chosen for mode in ("plain", "checked")]
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        for (name, mode), (run, seconds) in zip(jobs, pool.map(lambda j: run_child(*j, args), jobs)):
            results[name][mode], results[name][f"{mode}_s"] = run, seconds
            print(f"{name} {mode} {seconds:.0f}s {compare(run, gpu.get(name) if gpu else None, BY_NAME[name])}",
                  flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(table({**results, **{p.name: None for p in PROGRAMS if p.skip}}, gpu))


if __name__ == "__main__":
    main()
