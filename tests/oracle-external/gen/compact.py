import json, os, sys, glob
SRC, DST = sys.argv[1], sys.argv[2]
DROP = {"maxHeapBySize", "maxHeapToBySize", "bySizeToMaxHeap", "bufferBlocks", "indefiniteLifetimes"}
DROP_OBJ = {"numbered", "label", "color"}
for f in sorted(glob.glob(os.path.join(SRC, "**/memory_viewer/*.json"), recursive=True)):
    d = json.load(open(f))
    out = {k: v for k, v in d.items() if k not in DROP}
    if "maxHeap" in out:
        out["maxHeap"] = [{k: v for k, v in o.items() if k not in DROP_OBJ} for o in out["maxHeap"]]
    rel = os.path.relpath(f, SRC)
    dst = os.path.join(DST, rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "w") as w:
        json.dump(out, w, separators=(",", ":"), sort_keys=True)
        w.write("\n")
