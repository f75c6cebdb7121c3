"""A dump whose op names, source file path, source lines and stack-frame function names hold HTML/script.

Args: DUMP_DIR. Steps:
1. Writes a user module into a directory whose name is markup (`<img src=x onerror=window.__xss=1>`) with markup in
   its lines, and runs it under tfdbg2 (FULL_HEALTH, streaming): log(0) = -inf and 0 * -inf = NaN give alerts.
   One of its functions gets a markup name (code object co_name), which TF records as the frame's function.
2. TensorFlow refuses `<` in op names (Python and C++ both check), so the dump is then re-written through TF's own
   writer (`_pywrap_debug_events_writer`, the same C++ writer enable_dump_debug_info uses) with the marker op names
   replaced by markup everywhere they occur (op creation, input names, traces). Wall times are kept.
"""

import os
import shutil
import sys
import tempfile

import _common

XSS = "<img src=x onerror=window.__xss=1>"
SCRIPT = "<script>window.__xss=1</script>"
MARK = "XSSMARK"  # a legal op-name stem, replaced by XSS after TF wrote the dump
USER_SOURCE = f'''# {XSS} {SCRIPT}
import tensorflow as tf

LABEL = "{XSS}"  # markup inside a string literal


@tf.function
def step(x):
    probs = tf.identity(x, name="{MARK}_probs")
    logp = tf.math.log(probs, name="{MARK}_log")  # {XSS}
    return tf.multiply(probs, logp, name="{MARK}_mul")


def run():
    return step(tf.constant([0.0, 0.5, 1.0]))
'''


def write_user_module(root):
    folder = os.path.join(root, XSS)
    os.makedirs(folder)
    path = os.path.join(folder, "xss_user.py")
    with open(path, "w") as f:
        f.write(USER_SOURCE)
    return path


def run_program(raw_dump, module_path):
    tf = _common.enable(raw_dump, "FULL_HEALTH", -1)
    import importlib.util

    spec = importlib.util.spec_from_file_location("xss_user", module_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # The frame that calls the model gets a markup function name.
    caller = mod.run
    caller.__code__ = caller.__code__.replace(co_name=XSS)
    out = caller()
    print("result", out.numpy())
    tf.debugging.experimental.disable_dump_debug_info()


def rewrite(raw_dump, out_dump):
    from tensorflow.python.client import _pywrap_debug_events_writer as w
    from tensorflow.python.debug.lib import debug_events_reader

    def fix(text):
        return text.replace(MARK, XSS)

    reader = debug_events_reader.DebugEventsReader(raw_dump)
    os.makedirs(out_dump, exist_ok=True)
    w.Init(out_dump, reader.tfdbg_run_id(), -1)
    for ev, _ in reader.source_files_iterator():
        w.WriteSourceFile(out_dump, ev)
    for ev, _ in reader.stack_frames_iterator():
        w.WriteStackFrameWithId(out_dump, ev)
    for ev, _ in reader.graphs_iterator():
        if ev.HasField("graph_op_creation"):
            op = ev.graph_op_creation
            op.op_name = fix(op.op_name)
            names = [fix(n) for n in op.input_names]
            del op.input_names[:]
            op.input_names.extend(names)
            w.WriteGraphOpCreation(out_dump, ev)
        elif ev.HasField("debugged_graph"):
            w.WriteDebuggedGraph(out_dump, ev)
        elif ev.HasField("debugged_device"):
            w.RegisterDeviceAndGetId(out_dump, ev.debugged_device.device_name)
    for ev, _ in reader.execution_iterator():
        w.WriteExecution(out_dump, ev)
    for iterator in reader.graph_execution_traces_iterators():
        for ev, _ in iterator:
            ev.graph_execution_trace.op_name = fix(ev.graph_execution_trace.op_name)
            w.WriteGraphExecutionTrace(out_dump, ev)
    w.FlushNonExecutionFiles(out_dump)
    w.FlushExecutionFiles(out_dump)
    w.Close(out_dump)
    reader.close()


if __name__ == "__main__":
    out = sys.argv[1]
    work = tempfile.mkdtemp(prefix="dbg-xss-")
    try:
        module_path = write_user_module(work)
        raw = os.path.join(work, "raw")
        run_program(raw, module_path)
        rewrite(raw, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
