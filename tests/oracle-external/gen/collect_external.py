"""XProf 2.24.2's Memory Viewer / Memory Profile output for every xplane and hlo_proto in
corpus/external, with the calls of corpus/profiles/*/oracle/README.md, each on a scratch copy."""
import glob, json, os, shutil, sys, tempfile, traceback
from xprof.convert import raw_to_tool_data as r

EXTERNAL = sys.argv[1]
OUT = sys.argv[2]

def fields(buf):
    """(field number, wire type, value) of one protobuf message, without a schema."""
    i, n = 0, len(buf)
    while i < n:
        key, i = varint(buf, i)
        fno, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 1:
            v = buf[i:i + 8]; i += 8
        elif wt == 2:
            ln, i = varint(buf, i); v = buf[i:i + ln]; i += ln
        elif wt == 5:
            v = buf[i:i + 4]; i += 4
        else:
            raise ValueError(f"wire type {wt}")
        yield fno, wt, v

def varint(buf, i):
    shift = result = 0
    while True:
        b = buf[i]; i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7

def sub(buf, fno):
    return [v for f, wt, v in fields(buf) if f == fno and wt == 2]

def ints(buf, fno):
    return [v for f, wt, v in fields(buf) if f == fno and wt == 0]

def shape_spaces(shape):
    out = set()
    for layout in sub(shape, 5):
        out.update(ints(layout, 8))
    for t in sub(shape, 4):
        out |= shape_spaces(t)
    return out

def colors(hlo_proto_bytes):
    """Memory spaces as the oracle README states: logical-buffer and allocation colours of the
    buffer assignment, plus every non-zero layout memory space in instruction shapes and in
    host_program_shape."""
    found = set()
    for ba in sub(hlo_proto_bytes, 3):
        for lb in sub(ba, 1):
            found.update(ints(lb, 4) or [0])
        for alloc in sub(ba, 3):
            found.update(ints(alloc, 8) or [0])
    for module in sub(hlo_proto_bytes, 1):
        for comp in sub(module, 3):
            for inst in sub(comp, 2):
                for shape in sub(inst, 3):
                    found |= shape_spaces(shape)
        for ps in sub(module, 4):
            for p in sub(ps, 1) + sub(ps, 2):
                found |= shape_spaces(p)
    return sorted(found)

def save(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)

def run_xplane(xplane, out_dir, calls, extra_protos=()):
    scratch = tempfile.mkdtemp(prefix="xprof-oracle-")
    try:
        copy = os.path.join(scratch, os.path.basename(xplane))
        shutil.copy(xplane, copy)
        for p in extra_protos:
            shutil.copy(p, os.path.join(scratch, os.path.basename(p)))
        names = r.xspace_to_tool_names([copy])
        calls.append({"call": f"xspace_to_tool_names(['{os.path.basename(xplane)}'])", "result": names})
        protos = sorted(glob.glob(os.path.join(scratch, "*.hlo_proto.pb")))
        summary = {}
        for proto in protos:
            module = os.path.basename(proto)[: -len(".hlo_proto.pb")]
            with open(proto, "rb") as f:
                body = f.read()
            cs = colors(body)
            if 0 not in cs:
                cs = [0] + cs
            summary[module] = {"bytes": len(body), "colors": cs,
                               "extracted_by_xprof": os.path.basename(proto) not in
                               {os.path.basename(p) for p in extra_protos}}
            for c in cs:
                params = {"module_name": module, "memory_space": str(c)}
                call = {"call": f"xspace_to_tool_data([xplane], 'memory_viewer', {params})"}
                try:
                    data, ctype = r.xspace_to_tool_data([copy], "memory_viewer", params)
                    rel = f"memory_viewer/{module}.memory_space_{c}.json"
                    if data is None:
                        call["result"] = None
                    else:
                        save(os.path.join(out_dir, rel), data)
                        call.update({"content_type": ctype, "bytes": len(data), "file": rel})
                except Exception as e:  # recorded, not fatal: the oracle says what XProf did
                    call["error"] = repr(e)
                calls.append(call)
        call = {"call": "xspace_to_tool_data([xplane], 'memory_profile', {})"}
        try:
            data, ctype = r.xspace_to_tool_data([copy], "memory_profile", {})
            if data is not None:
                save(os.path.join(out_dir, "memory_profile.json"), data)
                call.update({"content_type": ctype, "bytes": len(data), "file": "memory_profile.json"})
            else:
                call["result"] = None
        except Exception as e:
            call["error"] = repr(e)
        calls.append(call)
        save(os.path.join(out_dir, "xprof_hlo_protos.json"), json.dumps(summary, indent=1))
    finally:
        shutil.rmtree(scratch)

def main():
    xplanes = sorted(glob.glob(os.path.join(EXTERNAL, "**", "*.xplane.pb"), recursive=True))
    for xplane in xplanes:
        rel = os.path.relpath(os.path.dirname(xplane), EXTERNAL)
        out_dir = os.path.join(OUT, rel)
        calls = []
        print("xplane", rel, flush=True)
        try:
            run_xplane(xplane, out_dir, calls)
        except Exception:
            calls.append({"error": traceback.format_exc()})
        save(os.path.join(out_dir, "calls.json"),
             json.dumps({"xprof_version": "2.24.2", "xplane": os.path.basename(xplane), "calls": calls}, indent=1))
    # Standalone <module>(<id>).hlo_proto.pb folders: each proto is put beside an empty XSpace,
    # which is how XProf's memory_viewer finds a module (by file name in the session dir).
    proto_dirs = sorted({os.path.dirname(p) for p in glob.glob(os.path.join(EXTERNAL, "**", "*.hlo_proto.pb"), recursive=True)})
    for d in proto_dirs:
        rel = os.path.relpath(d, EXTERNAL)
        out_dir = os.path.join(OUT, rel)
        calls = []
        print("hlo_proto dir", rel, flush=True)
        scratch = tempfile.mkdtemp(prefix="xprof-oracle-empty-")
        empty = os.path.join(scratch, "empty.xplane.pb")
        save(empty, b"")
        try:
            run_xplane(empty, out_dir, calls, extra_protos=sorted(glob.glob(os.path.join(d, "*.hlo_proto.pb"))))
        except Exception:
            calls.append({"error": traceback.format_exc()})
        shutil.rmtree(scratch)
        save(os.path.join(out_dir, "calls.json"),
             json.dumps({"xprof_version": "2.24.2", "xplane": "(empty XSpace) + " + rel, "calls": calls}, indent=1))

main()
