"""The bottom layer: the wire types (`types.py`, generated from `api/wire_schema.json` by
`scripts/gen_wire_types.py`). Every layer may import it; it imports nothing of the package."""
