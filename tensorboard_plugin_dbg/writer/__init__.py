"""Writing tfdbg2 file sets without TensorFlow (the JAX writer's output; tests' generators).

Training-side code: imports wire/ and reader/ only (tests/test_layers.py)."""
