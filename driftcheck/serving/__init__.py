"""Talking to a running inference server (SGLang, vLLM, any OpenAI-compatible one) over HTTP.

`http` holds the standard-library HTTP plumbing; `engine` turns what a server says about itself
into facts (which engine, which version, which settings). The `server` probe and the serving
benchmark client both build on them.
"""
