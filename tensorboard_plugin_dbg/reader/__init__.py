"""Reading tfdbg2 dump files without TensorFlow: TFRecord framing, CRC-32C, the DebugEvent schema, debug values."""
