"""The snapshot document: model, canonical JSON, signing, store, resolution, diff."""
