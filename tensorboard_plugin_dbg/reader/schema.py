"""The DebugEvent messages this project reads, built at import time from field numbers, without TensorFlow.

Field numbers follow TF's tensorflow/core/protobuf/debug_event.proto (see /work/shared/tfdbg2-format.md). The
schema lives in a private descriptor pool under its own package, so it never clashes with TensorFlow's or
TensorBoard's registrations when those are imported in the same process. TensorProto fields are declared `bytes`
(wire-compatible with an embedded message) and decoded on demand with TensorBoard's own TensorProto.
Works with protobuf 3.20+ (MessageFactory.GetPrototype) and 4.x/5.x/6.x (message_factory.GetMessageClass).
"""

from __future__ import annotations

from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from ..wire.types import DebugModeName

_PACKAGE = "tbdbg_schema"
_F = descriptor_pb2.FieldDescriptorProto

# name -> list of (field name, number, type, label, message type name or None)
_OPT, _REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_STR, _BYTES, _DBL, _I64, _I32, _MSG, _ENUM_AS_INT = (
    _F.TYPE_STRING,
    _F.TYPE_BYTES,
    _F.TYPE_DOUBLE,
    _F.TYPE_INT64,
    _F.TYPE_INT32,
    _F.TYPE_MESSAGE,
    _F.TYPE_INT32,
)
_MESSAGES: dict[str, list[tuple[str, int, Any, Any, str | None]]] = {
    "DebugMetadata": [
        ("tensorflow_version", 1, _STR, _OPT, None),
        ("file_version", 2, _STR, _OPT, None),
        ("tfdbg_run_id", 3, _STR, _OPT, None),
    ],
    "SourceFile": [
        ("file_path", 1, _STR, _OPT, None),
        ("host_name", 2, _STR, _OPT, None),
        ("lines", 3, _STR, _REP, None),
    ],
    "FileLineCol": [
        ("file_index", 1, _I32, _OPT, None),
        ("line", 2, _I32, _OPT, None),
        ("col", 3, _I32, _OPT, None),
        ("func", 4, _STR, _OPT, None),
        ("code", 5, _STR, _OPT, None),
    ],
    "StackFrameWithId": [("id", 1, _STR, _OPT, None), ("file_line_col", 2, _MSG, _OPT, "FileLineCol")],
    "CodeLocation": [("host_name", 1, _STR, _OPT, None), ("stack_frame_ids", 2, _STR, _REP, None)],
    "GraphOpCreation": [
        ("op_type", 1, _STR, _OPT, None),
        ("op_name", 2, _STR, _OPT, None),
        ("graph_name", 3, _STR, _OPT, None),
        ("graph_id", 4, _STR, _OPT, None),
        ("device_name", 5, _STR, _OPT, None),
        ("input_names", 6, _STR, _REP, None),
        ("num_outputs", 7, _I32, _OPT, None),
        ("code_location", 8, _MSG, _OPT, "CodeLocation"),
        ("output_tensor_ids", 9, _I32, _REP, None),
    ],
    "DebuggedGraph": [
        ("graph_id", 1, _STR, _OPT, None),
        ("graph_name", 2, _STR, _OPT, None),
        ("instrumented_ops", 3, _STR, _REP, None),
        ("original_graph_def", 4, _BYTES, _OPT, None),
        ("instrumented_graph_def", 5, _BYTES, _OPT, None),
        ("outer_context_id", 6, _STR, _OPT, None),
    ],
    "DebuggedDevice": [("device_name", 1, _STR, _OPT, None), ("device_id", 2, _I32, _OPT, None)],
    "Execution": [
        ("op_type", 1, _STR, _OPT, None),
        ("num_outputs", 2, _I32, _OPT, None),
        ("graph_id", 3, _STR, _OPT, None),
        ("input_tensor_ids", 4, _I64, _REP, None),
        ("output_tensor_ids", 5, _I64, _REP, None),
        ("tensor_debug_mode", 6, _ENUM_AS_INT, _OPT, None),
        ("tensor_protos", 7, _BYTES, _REP, None),
        ("code_location", 8, _MSG, _OPT, "CodeLocation"),
        ("output_tensor_device_ids", 9, _I32, _REP, None),
    ],
    "GraphExecutionTrace": [
        ("tfdbg_context_id", 1, _STR, _OPT, None),
        ("op_name", 2, _STR, _OPT, None),
        ("output_slot", 3, _I32, _OPT, None),
        ("tensor_debug_mode", 4, _ENUM_AS_INT, _OPT, None),
        ("tensor_proto", 5, _BYTES, _OPT, None),
        ("device_name", 6, _STR, _OPT, None),
    ],
    "DebugEvent": [
        ("wall_time", 1, _DBL, _OPT, None),
        ("step", 2, _I64, _OPT, None),
        ("debug_metadata", 3, _MSG, _OPT, "DebugMetadata"),
        ("source_file", 4, _MSG, _OPT, "SourceFile"),
        ("stack_frame_with_id", 6, _MSG, _OPT, "StackFrameWithId"),
        ("graph_op_creation", 7, _MSG, _OPT, "GraphOpCreation"),
        ("debugged_graph", 8, _MSG, _OPT, "DebuggedGraph"),
        ("execution", 9, _MSG, _OPT, "Execution"),
        ("graph_execution_trace", 10, _MSG, _OPT, "GraphExecutionTrace"),
        ("graph_id", 11, _STR, _OPT, None),
        ("debugged_device", 12, _MSG, _OPT, "DebuggedDevice"),
    ],
}
_ONEOF = {
    "debug_metadata",
    "source_file",
    "stack_frame_with_id",
    "graph_op_creation",
    "debugged_graph",
    "execution",
    "graph_execution_trace",
    "graph_id",
    "debugged_device",
}


def _build_file() -> descriptor_pb2.FileDescriptorProto:
    fdp = descriptor_pb2.FileDescriptorProto(name="tbdbg_schema/debug_event.proto", package=_PACKAGE, syntax="proto3")
    for msg_name, fields in _MESSAGES.items():
        msg = fdp.message_type.add(name=msg_name)
        if msg_name == "DebugEvent":
            msg.oneof_decl.add(name="what")
        for name, number, ftype, label, type_name in fields:
            f = msg.field.add(name=name, number=number, type=ftype, label=label)
            if type_name:
                f.type_name = f".{_PACKAGE}.{type_name}"
            if msg_name == "DebugEvent" and name in _ONEOF:
                f.oneof_index = 0
            if label == _REP and ftype not in (_STR, _BYTES, _MSG):
                f.options.packed = True
    return fdp


def _message_classes() -> dict[str, Any]:  # name -> the generated protobuf message class (protobuf is untyped)
    pool = descriptor_pool.DescriptorPool()
    fdp = _build_file()
    if hasattr(pool, "AddSerializedFile"):  # every protobuf runtime from 3.20 to 6.x
        pool.AddSerializedFile(fdp.SerializeToString())
    else:
        pool.Add(fdp)
    pool_file = pool.FindFileByName("tbdbg_schema/debug_event.proto")
    classes = {}
    for name in _MESSAGES:
        desc = pool_file.message_types_by_name[name]
        if hasattr(message_factory, "GetMessageClass"):
            classes[name] = message_factory.GetMessageClass(desc)
        else:  # protobuf < 4.21
            classes[name] = message_factory.MessageFactory(pool).GetPrototype(desc)
    return classes


_CLASSES = _message_classes()
DebugEvent = _CLASSES["DebugEvent"]
Execution = _CLASSES["Execution"]
GraphExecutionTrace = _CLASSES["GraphExecutionTrace"]

# TensorDebugMode enum values (debug_event.proto).
MODE_NAMES: dict[int, DebugModeName] = {
    0: "UNSPECIFIED",
    1: "NO_TENSOR",
    2: "CURT_HEALTH",
    3: "CONCISE_HEALTH",
    4: "FULL_HEALTH",
    5: "SHAPE",
    6: "FULL_NUMERICS",
    7: "FULL_TENSOR",
}
MODE_BY_NAME = {v: k for k, v in MODE_NAMES.items()}
# tensor_debug_mode values whose records say nothing about finiteness: NO_TENSOR, SHAPE.
NO_FINITENESS_MODES = (1, 5)


def parse_event(data: bytes) -> Any:  # a DebugEvent or None: protobuf's classes carry no types
    """A DebugEvent from its serialized bytes, or None when the bytes do not parse (never raises)."""
    event = DebugEvent()
    try:
        event.ParseFromString(data)
    except Exception:  # noqa: BLE001 - a damaged payload with a valid CRC is still just damage
        return None
    return event
