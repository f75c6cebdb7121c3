"""The plugin's JSON API: one route table (`routes/`, assembled from route groups) driving dispatch (`app.py`),
validation (`params.py`), errors (`errors.py`), encoding (`json_encoding.py`) and the OpenAPI document
(`openapi.py`)."""
