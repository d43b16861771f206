import json, os, sys, glob
SRC, DST = sys.argv[1], sys.argv[2]
DROP = {"maxHeapBySize", "maxHeapToBySize", "bySizeToMaxHeap", "bufferBlocks", "indefiniteLifetimes"}
DROP_OBJ = {"numbered", "label", "color"}
for f in sorted(glob.glob(os.path.join(SRC, "**/memory_viewer/*.json"), recursive=True)):
    if os.path.basename(f).startswith("NO_MODULE."):  # XProf's placeholder for a profile without modules
        continue
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

# Memory Profile: the allocator list and, per allocator, its summary and
# breakdown table (with the snapshots it points at); the sampled timeline is dropped.
for f in sorted(glob.glob(os.path.join(SRC, "**/memory_profile.json"), recursive=True)):
    if os.path.getsize(f) == 0:
        continue
    d = json.load(open(f))
    if not d.get("memoryIds"):
        continue
    keep = ("profileSummary", "activeAllocations", "specialAllocations", "memoryProfileSnapshots")
    out = {"memoryIds": d["memoryIds"],
           "memoryProfilePerAllocator": {k: {f2: v.get(f2, []) for f2 in keep}
                                         for k, v in d["memoryProfilePerAllocator"].items()}}
    dst = os.path.join(DST, os.path.relpath(f, SRC))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "w") as w:
        json.dump(out, w, separators=(",", ":"), sort_keys=True)
        w.write("\n")
