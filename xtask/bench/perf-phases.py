#!/usr/bin/env python3
"""Attribute `perf` samples of a bench-runner process to phases (docs/BENCHMARKS.md, "Where the time goes").

    perf record -F 4000 --call-graph dwarf,16384 -o open.data target/release/bench-runner open FILE
    perf script -i open.data -F ip,sym | python3 xtask/bench/perf-phases.py open
    python3 xtask/bench/perf-phases.py list < list.txt
    python3 xtask/bench/perf-phases.py --frame build_session_context < ctx.txt   # leaf functions under a frame

A sample goes to the first phase (in list order: most specific first) that has a frame on its stack.
With --frame REGEX: for the samples whose stack has a frame matching REGEX, the distribution of their
leaf functions.
"""
import collections
import re
import sys

PHASES = {
    "open": [
        ("envelope scan: message_role (walks the whole message value)", r"EnvelopeScanner::message_role"),
        ("envelope scan: other keys", r"EnvelopeScanner"),
        ("line framing + line checks (LineReader)", r"LineReader"),
        ("classify_row", r"classify_row"),
        ("Index::rebuild_children", r"Index::rebuild_children"),
        ("Index::resolve_canonical", r"Index::resolve_canonical"),
        ("Index::apply", r"Index::apply"),
        ("Index other", r"index::Index"),
        ("file read (read syscall + page faults of the buffer)", r"read_to_end|io::read_file"),
        ("rows::load (row vectors, collect)", r"rows::load"),
        ("open_with other (cache, header, report)", r"SessionManager::|cache::"),
        ("process start/exit", r"_dl_|exit|__libc_start"),
    ],
    "list": [
        ("full parse of rows (parse_value)", r"json::parse::parse_value"),
        ("LineReader (framing + envelope scan)", r"LineReader"),
        ("second envelope scan of every row", r"EnvelopeScanner"),
        ("file read", r"io::read_file|read_to_end"),
        ("text extraction / joins", r"text_of|push_join|join|to_str_lossy"),
        ("drop of parsed values", r"drop_in_place"),
        ("sort", r"sort"),
        ("directory listing / paths", r"jsonl_files|read_dir|normalize"),
    ],
}


def samples(stream):
    stack = []
    for line in stream:
        line = line.rstrip("\n")
        if not line.strip():
            if stack:
                yield stack
            stack = []
            continue
        parts = line.strip().split(None, 1)
        stack.append(parts[1] if len(parts) > 1 else "")
    if stack:
        yield stack


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--frame":
        frame = re.compile(args[1])
        counts, total, hits = collections.Counter(), 0, 0
        for st in samples(sys.stdin):
            total += 1
            if any(frame.search(f) for f in st):
                hits += 1
                counts[re.sub(r"\s+\(inlined\)", "", st[0])[:110]] += 1
        print(f"{hits} of {total} samples ({100 * hits / max(total, 1):.1f}%) contain {args[1]}")
        for name, c in counts.most_common(15):
            print(f"{100 * c / total:6.1f}%  {name}")
        return
    if len(args) != 1 or args[0] not in PHASES:
        sys.exit(f"usage: perf-phases.py {{{'|'.join(PHASES)}}} | --frame REGEX  (perf script on stdin)")
    pats = [(n, re.compile(p)) for n, p in PHASES[args[0]]]
    counts, total = collections.Counter(), 0
    for st in samples(sys.stdin):
        total += 1
        for name, p in pats:
            if any(p.search(f) for f in st):
                counts[name] += 1
                break
        else:
            counts["other: " + st[0][:60]] += 1
    for name, c in counts.most_common(20):
        print(f"{100 * c / max(total, 1):6.1f}%  {name}")
    print(f"{total} samples")


if __name__ == "__main__":
    main()
