"""Runs XProf 2.24.2's own converters the way its UI does for the memory tools,
and prints one JSON line: what they computed and how long each step took.

    python xprof_converters.py RUN_DIR/host.xplane.pb

Steps (as in XProf's CLI and UI): xspace_to_tool_names (extracts every module's
HloProto beside the xplane), memory_viewer for the largest module (memory
space 0), memory_profile.
"""
import glob
import json
import os
import resource
import sys
import time

from xprof.convert import raw_to_tool_data as r

xplane = sys.argv[1]
run_dir = os.path.dirname(xplane)
t0 = time.time()
r.xspace_to_tool_names([xplane])
t1 = time.time()
protos = glob.glob(os.path.join(run_dir, "*.hlo_proto.pb"))
largest = max(protos, key=os.path.getsize)
module = os.path.basename(largest)[: -len(".hlo_proto.pb")]
viewer, _ = r.xspace_to_tool_data([xplane], "memory_viewer", {"module_name": module, "memory_space": "0"})
t2 = time.time()
r.xspace_to_tool_data([xplane], "memory_profile", {})
t3 = time.time()
viewer = json.loads(viewer)
print(json.dumps({
    "module": module,
    "peak_bytes": viewer["peakHeapMib"] * 2**20,
    "peak_position": viewer.get("peakHeapSizePosition", 0),
    "buffers_at_peak": len(viewer.get("maxHeap", [])),
    "tool_names_s": round(t1 - t0, 3),
    "memory_viewer_s": round(t2 - t1, 3),
    "memory_profile_s": round(t3 - t2, 3),
    "total_s": round(t3 - t0, 3),
    "max_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
}))
